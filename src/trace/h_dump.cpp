// h-dump: a trace as readable text, as JSON, as per-operation call counts, or as the traffic between ranks.
#include "trace/render.hpp"
#include "trace/trace_file.hpp"

#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>

namespace {

constexpr const char* kUsage =
    "usage: h-dump [--json] [--calls | --sequence | --matrix] TRACE\n"
    "  (default)     the whole trace as text\n"
    "  --json        the whole trace as JSON\n"
    "  --calls       per MPI operation, the calls the trace stands for (all ranks, loops expanded)\n"
    "  --calls --json  the same per rank, with bytes, peers and matched sources\n"
    "  --sequence    each rank's calls in order, one per line (loops expanded)\n"
    "  --matrix      point-to-point messages and bytes from each rank to each rank (loops expanded;\n"
    "                collectives left out), with --json as JSON\n";

}  // namespace

int main(int argc, char** argv)
{
    bool json = false;
    bool calls = false;
    bool sequence = false;
    bool matrix = false;
    std::string path;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--json") {
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
    if (int(calls) + int(sequence) + int(matrix) > 1) {
        std::cerr << "h-dump: --calls, --sequence and --matrix are different views: give one\n" << kUsage;
        return 2;
    }
    try {
        htrace::DecodeResult result = htrace::read_trace_file(path);
        if (!result.trace) {
            std::cerr << "h-dump: " << path << ": " << result.error << "\n";
            return 1;
        }
        const htrace::Trace& trace = *result.trace;
        if (sequence) {
            std::cout << htrace::render_sequence(trace);
        } else if (matrix) {
            std::cout << (json ? htrace::render_matrix_json(trace) : htrace::render_matrix(trace));
        } else if (calls) {
            std::cout << (json ? htrace::render_call_counts_json(trace) : htrace::render_call_counts(trace));
        } else {
            std::cout << (json ? htrace::render_json(trace) : htrace::render_text(trace));
        }
        std::cout.flush();
        return std::cout ? 0 : 1;
    } catch (const std::exception& e) {
        std::cerr << "h-dump: " << path << ": " << e.what() << "\n";
        return 1;
    }
}
