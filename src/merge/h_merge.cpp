// h-merge: joins the partial files ranks wrote when their job ended before MPI_Finalize
// (trace.h.part.RANK) into one trace marked incomplete.
//   h-merge trace.h.part.* -o trace.h
#include "merge/partial_merge.hpp"
#include "trace/trace_file.hpp"

#include <iostream>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: h-merge PART... -o TRACE\n"
    "  Merges the partial files the ranks of a job that ended before MPI_Finalize wrote (TRACE.part.RANK:\n"
    "  on SIGTERM or SIGINT, at MPI_Abort, at exit, or every HTRACE_FLUSH_SECONDS) into one trace marked\n"
    "  incomplete: its header says which ranks it holds and where each stopped. h-replay replays it only\n"
    "  with --partial.\n";

}  // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> inputs;
    std::string output;
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "-o" && i + 1 < argc) {
            output = argv[++i];
        } else if (arg == "-h" || arg == "--help") {
            std::cout << kUsage;
            return 0;
        } else if (arg == "-o") {
            std::cerr << "h-merge: " << arg << " wants a value after it\n" << kUsage;
            return 2;
        } else if (!arg.empty() && arg[0] == '-') {
            std::cerr << "h-merge: unknown option " << arg << "\n" << kUsage;
            return 2;
        } else {
            inputs.emplace_back(arg);
        }
    }
    if (inputs.empty() || output.empty()) {
        std::cerr << kUsage;
        return 2;
    }
    try {
        std::vector<htrace::Trace> parts;
        for (const std::string& path : inputs) {
            htrace::DecodeResult read = htrace::read_trace_file(path);
            if (!read.trace) {
                std::cerr << "h-merge: " << path << ": " << read.error << "\n";
                return 1;
            }
            parts.push_back(std::move(*read.trace));
        }
        htrace::PartsMergeResult merged = htrace::merge_parts(std::move(parts), inputs);
        if (!merged.trace) {
            std::cerr << "h-merge: " << merged.error << "\n";
            return 1;
        }
        if (const std::string error = htrace::write_trace_file(output, *merged.trace); !error.empty()) {
            std::cerr << "h-merge: " << output << ": " << error << "\n";
            return 1;
        }
        const auto& h = merged.trace->header;
        std::cerr << "h-merge: wrote " << output << ": " << h.stops.size() << " of " << h.ranks
                  << " ranks, incomplete\n";
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "h-merge: " << e.what() << "\n";
        return 1;
    }
}
