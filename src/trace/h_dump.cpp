// h-dump: a trace as readable text, as JSON, as per-operation call counts, as the traffic between
// ranks, or as a profile of where the time went.
#include "trace/render.hpp"
#include "trace/trace_file.hpp"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

namespace {

constexpr const char* kUsage =
    "usage: h-dump [--json] [--calls | --sequence | --matrix | --profile [--top N]] [--max-calls N] TRACE\n"
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
    "  --max-calls N the most calls --sequence prints, and the most any view visits one by one\n"
    "                (default 100000000): a view that would need more says so and prints nothing\n";

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
    try {
        htrace::DecodeResult result = htrace::read_trace_file(path);
        if (!result.trace) {
            std::cerr << "h-dump: " << path << ": " << result.error << "\n";
            return 1;
        }
        const htrace::Trace& trace = *result.trace;
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
