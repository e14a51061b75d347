// The merge at MPI_Finalize in one process (issue 27): the ranks' own traces (the part files a job
// leaves when it exits without MPI_Finalize: bench/irregular_exchange.c's `parts`) merged over the
// binomial tree as reduce_over_tree does on one host, each child's trace encoded and decoded as it
// would travel.
// Prints the CPU seconds each level of the tree took in all, and the critical path (the slowest
// merge of each level, summed): what rank 0 waits for where each rank has a core of its own.
//   merge-tree-cost TRACE.part.0 TRACE.part.1 ...   (in rank order)
#include "merge/rank_merge.hpp"
#include "trace/trace_file.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv)
{
    std::vector<htrace::Sequence> traces;
    htrace::MergeRule rule;
    for (int i = 1; i < argc; ++i) {
        htrace::DecodeResult read = htrace::read_trace_file(argv[i]);
        if (!read.trace) {
            std::fprintf(stderr, "merge-tree-cost: %s: %s\n", argv[i], read.error.c_str());
            return 1;
        }
        rule = htrace::MergeRule{read.trace->header.precision, read.trace->header.histogram};
        traces.push_back(std::move(read.trace->body));
    }
    if (traces.empty()) return 2;
    using Clock = std::chrono::steady_clock;
    double total = 0;
    double critical = 0;
    std::printf("level,merges,seconds_all,seconds_slowest\n");
    for (size_t step = 1, level = 0; step < traces.size(); step *= 2, ++level) {
        double all = 0;
        double slowest = 0;
        int merges = 0;
        for (size_t r = 0; r + step < traces.size(); r += 2 * step) {
            const auto start = Clock::now();
            auto decoded = htrace::decode_sequence(htrace::encode_sequence(traces[r + step]));
            if (!decoded.sequence) return 1;
            traces[r] = htrace::merge_ranks(std::move(traces[r]), std::move(*decoded.sequence), rule);
            const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
            all += seconds;
            slowest = std::max(slowest, seconds);
            ++merges;
        }
        std::printf("%zu,%d,%.3f,%.3f\n", level, merges, all, slowest);
        total += all;
        critical += slowest;
    }
    std::printf("total_cpu_seconds,%.3f\ncritical_path_seconds,%.3f\nmerged_bytes,%zu\n", total, critical,
                htrace::encode_sequence(traces[0]).size());
    return 0;
}
