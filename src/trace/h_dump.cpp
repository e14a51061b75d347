// h-dump: a trace as readable text, as JSON, as per-operation call counts, as the traffic between
// ranks, or as a profile of where the time went.
#include "replay/expected_timeline.hpp"
#include "timeline/chrome_trace.hpp"
#ifdef HTRACE_OTF2
#include "timeline/otf2_archive.hpp"
#endif
#include "trace/render.hpp"
#include "trace/trace_file.hpp"

#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

namespace {

constexpr const char* kUsage =
    "usage: h-dump [--json] [--calls | --sequence | --matrix | --profile [--top N]] [--max-calls N] TRACE\n"
    "       h-dump [--chrome-trace FILE] [--otf2 DIR] [--max-calls N] TRACE\n"
    "  (default)     the whole trace as text\n"
    "  --json        the whole trace as JSON\n"
    "  --calls       per MPI operation, the calls the trace stands for (all ranks, loops expanded)\n"
    "  --calls --json  the same per rank, with bytes, peers and matched sources\n"
    "  --sequence    each rank's calls in order, one per line (loops expanded)\n"
    "  --matrix      point-to-point messages and bytes from each rank to each rank (loops expanded;\n"
    "                collectives left out), with --json as JSON\n"
    "  --profile     where the time went: the job's time, each rank's time computing, in MPI and in\n"
    "                I/O (least, mean, most, and which rank), and the call sites by their time in calls,\n"
    "                with --json as JSON (every site). A site's source file and line come from the\n"
    "                program's debug information by addr2line when the binary is still where it ran;\n"
    "                its module and address otherwise\n"
    "  --top N       the most call sites --profile lists (default 20)\n"
    "  --chrome-trace FILE  the timeline the trace expects, without running it (each rank's calls as a\n"
    "                replay at the trace's seed would make them, each taking its call's traced mean time),\n"
    "                as a Chrome trace that Perfetto and chrome://tracing open\n"
    "  --otf2 DIR    the same timeline as an OTF2 archive in DIR (DIR/traces.otf2), for Vampir and\n"
    "                other OTF2 tools; DIR must not hold one already\n"
    "  --max-calls N the most calls --sequence prints, and the most any view visits one by one\n"
    "                (default 100000000): a view that would need more says so and prints nothing\n";

// Each timeline asked for, from one walk of the schedule per file; a file left incomplete is removed.
int write_timelines(const htrace::Trace& trace, const std::string& path, const std::string& chrome_trace,
                    const std::string& otf2_dir, uint64_t max_calls)
{
    const std::string title = "h-trace: " + trace.header.command_line;
    if (!chrome_trace.empty()) {
        std::ofstream file(chrome_trace);
        if (!file) {
            std::cerr << "h-dump: cannot write " << chrome_trace << "\n";
            return 1;
        }
        htrace::timeline::ChromeTraceWriter writer(file, title);
        if (const std::string error = htrace::replay::write_expected_timeline(trace, max_calls, writer); !error.empty()) {
            file.close();
            std::remove(chrome_trace.c_str());
            std::cerr << "h-dump: " << path << ": " << error << "\n";
            return 1;
        }
    }
#ifdef HTRACE_OTF2
    if (!otf2_dir.empty()) {
        htrace::timeline::Otf2ArchiveWriter writer(otf2_dir, title, trace.header.ranks);
        if (const std::string error = htrace::replay::write_expected_timeline(trace, max_calls, writer); !error.empty()) {
            std::cerr << "h-dump: " << path << ": " << error << "\n";
            return 1;
        }
    }
#endif
    return 0;
}

struct Options {
    std::string path;
    bool json = false;
    bool calls = false;
    bool sequence = false;
    bool matrix = false;
    bool profile = false;
    size_t top = 20;
    uint64_t max_calls = htrace::kDefaultMaxCalls;
    std::string chrome_trace;
    std::string otf2_dir;
    bool timeline() const { return !chrome_trace.empty() || !otf2_dir.empty(); }
};

// A whole number after option `arg`, or a message saying what was wrong.
template <typename Number>
std::string whole_number(std::string_view arg, std::string_view given, const char* what, Number& out)
{
    const auto [end, error] = std::from_chars(given.data(), given.data() + given.size(), out);
    if (!given.empty() && error == std::errc() && end == given.data() + given.size()) return {};
    return std::string(arg) + " wants a whole number of " + what + ", not '" + std::string(given) + "'";
}

// Empty when the options make sense together, else why not; `help` when the usage was asked for.
std::string parse_options(int argc, char** argv, Options& options, bool& help)
{
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        const auto value = [&]() -> std::string_view { return i + 1 < argc ? argv[++i] : ""; };
        std::string problem;
        if (arg == "--max-calls") {
            problem = whole_number(arg, value(), "calls", options.max_calls);
        } else if (arg == "--top") {
            problem = whole_number(arg, value(), "call sites", options.top);
        } else if (arg == "--chrome-trace" || arg == "--otf2") {
            const std::string_view given = value();
            if (given.empty()) return std::string(arg) + " wants a " + (arg == "--otf2" ? "directory" : "file");
            (arg == "--otf2" ? options.otf2_dir : options.chrome_trace) = given;
        } else if (arg == "--profile" || arg == "--json" || arg == "--calls" || arg == "--sequence" || arg == "--matrix") {
            (arg == "--profile" ? options.profile : arg == "--json" ? options.json : arg == "--calls" ? options.calls
             : arg == "--sequence" ? options.sequence : options.matrix) = true;
        } else if (arg == "-h" || arg == "--help") {
            help = true;
            return {};
        } else if (!arg.empty() && arg[0] == '-') {
            return "unknown option " + std::string(arg);
        } else if (!options.path.empty()) {
            return "more than one trace given";
        } else {
            options.path = arg;
        }
        if (!problem.empty()) return problem;
    }
    if (options.path.empty()) return "no trace given";
    if (int(options.calls) + int(options.sequence) + int(options.matrix) + int(options.profile) > 1) {
        return "--calls, --sequence, --matrix and --profile are different views: give one";
    }
    if (options.sequence && options.json) return "--sequence has no JSON form";
    if (options.timeline() && (options.json || options.calls || options.sequence || options.matrix || options.profile)) {
        return "--chrome-trace and --otf2 write files; give them without a view";
    }
#ifndef HTRACE_OTF2
    if (!options.otf2_dir.empty()) return "--otf2: this h-dump was built without OTF2 (libotf2-trace-dev)";
#endif
    return {};
}

// The view the options ask for, written to stdout as it goes: the output may be far larger than the trace.
htrace::RenderError write_view(const Options& options, const htrace::Trace& trace)
{
    const uint64_t max_calls = options.max_calls;
    if (options.sequence) return htrace::render_sequence(std::cout, trace, max_calls);
    if (options.matrix) {
        return options.json ? htrace::render_matrix_json(std::cout, trace, max_calls)
                            : htrace::render_matrix(std::cout, trace, max_calls);
    }
    if (options.profile) {
        const htrace::SourceLines source_lines = htrace::resolve_source_lines(trace.locations);
        return options.json ? htrace::render_profile_json(std::cout, trace, max_calls, source_lines)
                            : htrace::render_profile(std::cout, trace, options.top, max_calls, source_lines);
    }
    if (options.calls) {
        return options.json ? htrace::render_call_counts_json(std::cout, trace, max_calls)
                            : htrace::render_call_counts(std::cout, trace, max_calls);
    }
    if (options.json) {
        htrace::render_json(std::cout, trace);
    } else {
        htrace::render_text(std::cout, trace);
    }
    return {};
}

}  // namespace

int main(int argc, char** argv)
{
    std::ios::sync_with_stdio(false);  // only iostreams write: the large views go faster unsynchronised
    Options options;
    bool help = false;
    if (const std::string problem = parse_options(argc, argv, options, help); help || !problem.empty()) {
        if (help) {
            std::cout << kUsage;
            return 0;
        }
        std::cerr << (problem == "no trace given" ? "" : "h-dump: " + problem + "\n") << kUsage;
        return 2;
    }
    const std::string& path = options.path;
    try {
        htrace::DecodeResult result = htrace::read_trace_file(path);
        if (!result.trace) {
            std::cerr << "h-dump: " << path << ": " << result.error << "\n";
            return 1;
        }
        const htrace::Trace& trace = *result.trace;
        if (options.timeline()) {
            return write_timelines(trace, path, options.chrome_trace, options.otf2_dir, options.max_calls);
        }
        if (const htrace::RenderError error = write_view(options, trace); !error.empty()) {
            std::cerr << "h-dump: " << path << ": " << error << "\n";
            return 1;
        }
        std::cout.flush();
        if (!std::cout) {
            std::cerr << "h-dump: " << path << ": cannot write the output\n";
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "h-dump: " << path << ": " << e.what() << "\n";
        return 1;
    }
}
