#include "merge/loop_folding.hpp"
#include "merge/precision.hpp"
#include "merge/rank_merge.hpp"
#include "merge/unroll.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

using namespace htrace;
using htrace::test::call;
using htrace::test::expected_calls;

namespace {

MergeRule at(int precision) { return MergeRule{precision, HistogramConfig{}}; }

// An adaptive code as one rank runs it: time steps of a varying number of receives (r), sends (s)
// and completions (w) ended by an MPI_Allreduce (c); every fourth step a refinement of `rounds`
// settling rounds (a message or none, then an MPI_Allreduce d) and a rebalance (MPI_Alltoall a,
// blocking sends b to some partners). The collectives and the rounds are the job's, alike on every
// rank; the messages are the rank's own.
struct AdaptiveRank {
    Sequence folded;
    std::map<char, double> calls;  // what the rank called
};

AdaptiveRank adaptive_rank(Rank rank, const std::vector<int>& rounds, uint32_t seed)
{
    std::mt19937 rng(seed * 7919u + static_cast<uint32_t>(rank));
    LoopFolder folder(at(0), rank);
    AdaptiveRank run;
    const auto add = [&](Event e) {
        run.calls[static_cast<char>(e.signature)] += 1;
        folder.append(std::move(e));
    };
    add(call('i', 8, rank, Op::Init));
    const int steps = 4 * static_cast<int>(rounds.size());
    for (int t = 0; t < steps; ++t) {
        // Ranks at the edge of the mesh (here: a third of them) exchange less, and never alike.
        const int partners = (rank % 3 == 0 ? 1 : 2) + static_cast<int>(rng() % 3);
        for (int k = 0; k < partners; ++k) add(call('r', 16 * (1 + static_cast<int64_t>(rng() % 4)), rank, Op::Irecv));
        for (int k = 0; k < partners; ++k) add(call('s', 16 * (1 + static_cast<int64_t>(rng() % 4)), rank, Op::Isend));
        for (int k = 0; k < partners; ++k) add(call('w', 8, rank, Op::Waitany));
        add(test::collective('c', rank, Op::Allreduce));
        if (t % 4 != 3) continue;
        for (int round = 0; round < rounds[static_cast<size_t>(t / 4)]; ++round) {
            if (rng() % 2 != 0) add(call('l', 8, rank, Op::Send));
            add(test::collective('d', rank, Op::Allreduce));
        }
        add(test::collective('a', rank, Op::Alltoall));
        for (int k = static_cast<int>(rng() % 3); k > 0; --k) add(call('b', 152, rank));
    }
    add(call('f', 8, rank, Op::Finalize));
    run.folded = test::with_rank(folder.finish(), rank);
    return run;
}

// The loops and collectives of `seq`, its other calls left out: what every rank must share.
std::string skeleton(const Sequence& seq)
{
    std::string out;
    for (const auto& node : seq) {
        if (node.is_loop()) {
            const std::string inner = skeleton(node.loop().body);
            if (inner.empty()) continue;
            const Value& count = node.loop().iterations;
            out += "(" + inner + ")" + (count.is_exact() ? std::to_string(count.exact()) : std::string("h"));
        } else if (is_collective_or_creation(node.event().op)) {
            out += static_cast<char>(node.event().signature);
        }
    }
    return out;
}

struct AdaptiveJob {
    Sequence merged;
    std::map<char, double> calls;
    std::vector<std::string> skeletons;
};

AdaptiveJob adaptive_job(int32_t ranks, uint32_t seed)
{
    std::mt19937 rng(seed);
    std::vector<int> rounds(6);
    for (auto& r : rounds) r = 1 + static_cast<int>(rng() % 3);
    AdaptiveJob job;
    std::vector<Sequence> sequences;
    for (Rank r = 0; r < ranks; ++r) {
        AdaptiveRank run = adaptive_rank(r, rounds, seed);
        for (const auto& [site, calls] : run.calls) job.calls[site] += calls;
        // Each rank's own sequence stands for each of its calls.
        const auto counted = expected_calls(run.folded, ranks);
        for (const auto& [site, calls] : run.calls) {
            CAPTURE(r);
            CAPTURE(site);
            CHECK(counted.at(site) == doctest::Approx(calls).epsilon(1e-9));
        }
        job.skeletons.push_back(skeleton(run.folded));
        sequences.push_back(std::move(run.folded));
    }
    for (int32_t step = 1; step < ranks; step <<= 1) {
        for (int32_t parent = 0; parent + step < ranks; parent += 2 * step) {
            auto& mine = sequences[static_cast<size_t>(parent)];
            mine = merge_ranks(std::move(mine), std::move(sequences[static_cast<size_t>(parent + step)]), at(0));
        }
    }
    job.merged = std::move(sequences.front());
    return job;
}

}  // namespace

TEST_CASE("at precision 0 every rank folds its steps into the loops of the world's collectives")
{
    for (const uint32_t seed : {1u, 2u, 3u}) {
        CAPTURE(seed);
        const AdaptiveJob job = adaptive_job(16, seed);
        // Loops of the rounds, the steps and the refinements, the same on every rank whatever its
        // messages: the first rank's skeleton is every rank's.
        for (const auto& other : job.skeletons) CHECK(other == job.skeletons.front());
        CHECK(job.skeletons.front().find("(c)4") != std::string::npos);
    }
}

TEST_CASE("at precision 0 the steps of ranks whose messages differ merge into a trace that stands for every call")
{
    for (const int32_t ranks : {4, 16, 64}) {
        CAPTURE(ranks);
        const AdaptiveJob job = adaptive_job(ranks, 11);
        const auto counted = expected_calls(job.merged, ranks);
        for (const auto& [site, calls] : job.calls) {
            CAPTURE(site);
            CHECK(counted.at(site) == doctest::Approx(calls).epsilon(0.01));
        }
    }
    // Ranks alike in distribution merge into the same events: the shape barely grows with the ranks.
    const size_t at_4 = nested_size(adaptive_job(4, 5).merged);
    const size_t at_64 = nested_size(adaptive_job(64, 5).merged);
    CAPTURE(at_4);
    CAPTURE(at_64);
    CHECK(at_64 * 4 <= at_4 * 5);
}
