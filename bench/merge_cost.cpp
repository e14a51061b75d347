// Matching cost of the merge of ranks on two long, similar traces: rank A's calls and rank B's,
// the same program with a few calls inserted or changed here and there. Prints, per length, the
// median time of merge_ranks over several runs.
#include "merge/rank_merge.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

namespace {

htrace::Event call(uint64_t site, int64_t bytes, htrace::Rank rank)
{
    htrace::Event e;
    e.op = htrace::Op::Send;
    e.signature = site;
    e.params = {{htrace::Role::peer, htrace::Value(int64_t{1})}, {htrace::Role::bytes, htrace::Value(bytes)},
                {htrace::Role::comm, htrace::Value(int64_t{0})}};
    e.ranks = htrace::RankList(rank);
    return e;
}

// A sequence that does not fold: distinct byte counts, so every call stays an event.
htrace::Sequence long_trace(size_t length, htrace::Rank rank, double differ, std::mt19937& rng)
{
    htrace::Sequence seq;
    std::bernoulli_distribution edit(differ);
    for (size_t i = 0; i < length; ++i) {
        if (rank == 1 && edit(rng)) {
            seq.push_back(htrace::Node{call(1000 + rng() % 7, 1, rank)});  // an extra call on one side
        }
        seq.push_back(htrace::Node{call(i % 16, static_cast<int64_t>(i), rank)});
    }
    return seq;
}

}  // namespace

int main(int argc, char** argv)
{
    const double differ = argc > 1 ? std::atof(argv[1]) : 0.01;
    std::printf("length,edits_per_call,median_seconds,seconds_per_1000_events\n");
    for (size_t length : {1000, 4000, 16000, 64000, 256000}) {
        std::vector<double> times;
        for (int run = 0; run < 5; ++run) {
            std::mt19937 rng(static_cast<unsigned>(run + 1));
            htrace::Sequence a = long_trace(length, 0, differ, rng);
            htrace::Sequence b = long_trace(length, 1, differ, rng);
            const auto start = std::chrono::steady_clock::now();
            htrace::Sequence merged = htrace::merge_ranks(std::move(a), std::move(b));
            times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
            if (merged.size() < length) return 1;  // the merge cannot lose calls
        }
        std::sort(times.begin(), times.end());
        std::printf("%zu,%g,%.4f,%.4f\n", length, differ, times[2], times[2] / double(length) * 1000);
    }
    return 0;
}
