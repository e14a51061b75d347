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

}  // namespace

int main(int argc, char** argv)
{
    bool json = false;
    bool calls = false;
    bool sequence = false;
    bool matrix = false;
    bool profile = false;
    size_t top = 20;
    std::ios::sync_with_stdio(false);  // only iostreams write: the large views go faster unsynchronised
    uint64_t max_calls = htrace::kDefaultMaxCalls;
    std::string path;
    std::string chrome_trace;
    std::string otf2_dir;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--max-calls") {
            const std::string_view given = i + 1 < argc ? argv[++i] : "";
            const auto [end, error] = std::from_chars(given.data(), given.data() + given.size(), max_calls);
            if (given.empty() || error != std::errc() || end != given.data() + given.size()) {
                std::cerr << "h-dump: --max-calls wants a whole number of calls, not '" << given << "'\n" << kUsage;
                return 2;
            }
        } else if (arg == "--top") {
            const std::string_view given = i + 1 < argc ? argv[++i] : "";
            const auto [end, error] = std::from_chars(given.data(), given.data() + given.size(), top);
            if (given.empty() || error != std::errc() || end != given.data() + given.size()) {
                std::cerr << "h-dump: --top wants a whole number of call sites, not '" << given << "'\n" << kUsage;
                return 2;
            }
        } else if (arg == "--chrome-trace" || arg == "--otf2") {
            const std::string given = i + 1 < argc ? argv[++i] : "";
            if (given.empty()) {
                std::cerr << "h-dump: " << arg << " wants a " << (arg == "--otf2" ? "directory" : "file") << "\n" << kUsage;
                return 2;
            }
            (arg == "--otf2" ? otf2_dir : chrome_trace) = given;
        } else if (arg == "--profile") {
            profile = true;
        } else if (arg == "--json") {
            json = true;
        } else if (arg == "--calls") {
            calls = true;
        } else if (arg == "--sequence") {
            sequence = true;
        } else if (arg == "--matrix") {
            matrix = true;
        } else if (arg == "-h" || arg == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (!arg.empty() && arg[0] == '-') {
            std::cerr << "h-dump: unknown option " << arg << "\n" << kUsage;
            return 2;
        } else if (path.empty()) {
            path = arg;
        } else {
            std::cerr << "h-dump: more than one trace given\n" << kUsage;
            return 2;
        }
    }
    if (path.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    if (int(calls) + int(sequence) + int(matrix) + int(profile) > 1) {
        std::cerr << "h-dump: --calls, --sequence, --matrix and --profile are different views: give one\n" << kUsage;
        return 2;
    }
    const bool timeline = !chrome_trace.empty() || !otf2_dir.empty();
    if (timeline && (json || calls || sequence || matrix || profile)) {
        std::cerr << "h-dump: --chrome-trace and --otf2 write files; give them without a view\n" << kUsage;
        return 2;
    }
#ifndef HTRACE_OTF2
    if (!otf2_dir.empty()) {
        std::cerr << "h-dump: --otf2: this h-dump was built without OTF2 (libotf2-trace-dev)\n";
        return 2;
    }
#endif
    try {
        htrace::DecodeResult result = htrace::read_trace_file(path);
        if (!result.trace) {
            std::cerr << "h-dump: " << path << ": " << result.error << "\n";
            return 1;
        }
        const htrace::Trace& trace = *result.trace;
        if (timeline) return write_timelines(trace, path, chrome_trace, otf2_dir, max_calls);
        // Written as it goes: the output may be far larger than the trace.
        htrace::RenderError error;
        if (sequence) {
            error = htrace::render_sequence(std::cout, trace, max_calls);
        } else if (matrix) {
            error = json ? htrace::render_matrix_json(std::cout, trace, max_calls)
                         : htrace::render_matrix(std::cout, trace, max_calls);
        } else if (profile) {
            const htrace::SourceLines source_lines = htrace::resolve_source_lines(trace.locations);
            error = json ? htrace::render_profile_json(std::cout, trace, max_calls, source_lines)
                         : htrace::render_profile(std::cout, trace, top, max_calls, source_lines);
        } else if (calls) {
            error = json ? htrace::render_call_counts_json(std::cout, trace, max_calls)
                         : htrace::render_call_counts(std::cout, trace, max_calls);
        } else if (json) {
            htrace::render_json(std::cout, trace);
        } else {
            htrace::render_text(std::cout, trace);
        }
        if (!error.empty()) {
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
