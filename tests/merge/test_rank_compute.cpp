#include "merge/rank_compute.hpp"
#include "merge/rank_merge.hpp"

#include "support/merge_tree.hpp"
#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <vector>

using namespace htrace;

namespace {

// One rank's trace: `calls` sends from one call site, each after `seconds` of computation.
Sequence computing_rank(Rank rank, double seconds, int calls = 100)
{
    Event e = test::call('a', 8, rank);
    e.compute = TimeStats{};
    for (int i = 0; i < calls; ++i) e.compute.add(seconds);
    return {test::loop(calls, {Node{e}})};
}

MergeRule significant_after(double seconds)
{
    MergeRule rule;
    rule.significant_compute_seconds = seconds;
    return rule;
}

Event only_event(const Sequence& seq)
{
    REQUIRE(seq.size() == 1);
    REQUIRE(seq[0].is_loop());
    REQUIRE(seq[0].loop().body.size() == 1);
    return seq[0].loop().body[0].event();
}

}  // namespace

TEST_CASE("a rank that computes clearly longer keeps its own time, and the others share theirs")
{
    // Rank 2 computes 3 ms before each call, the others 1 ms (+-1%): 100 calls make 0.2 s of
    // difference, above the 0.01 s that matters.
    std::vector<Sequence> ranks;
    for (Rank r = 0; r < 8; ++r) ranks.push_back(computing_rank(r, r == 2 ? 3e-3 : 1e-3 * (1 + 0.01 * (r % 3))));
    const Event e = only_event(test::merge_tree(std::move(ranks), significant_after(0.01)));
    CHECK(e.ranks.size() == 8);
    REQUIRE(e.compute_by_rank.size() == 2);
    CHECK(e.compute_of(2).mean == doctest::Approx(3e-3));
    CHECK(e.compute_of(2).count == 100);
    for (Rank r : {0, 1, 3, 4, 5, 6, 7}) {
        CHECK(e.compute_of(r).mean == doctest::Approx(1e-3).epsilon(0.02));
        CHECK(e.compute_of(r).count == 700);
    }
    // The event's own statistics stay those of every call.
    CHECK(e.compute.count == 800);
    CHECK(e.compute.mean == doctest::Approx((3e-3 + 7 * 1.01e-3) / 8).epsilon(0.01));
}

TEST_CASE("ranks' times merge where the difference is small or adds up to little")
{
    SUBCASE("within the tolerance")
    {
        std::vector<Sequence> ranks{computing_rank(0, 1e-3), computing_rank(1, 1.04e-3)};
        CHECK(only_event(test::merge_tree(std::move(ranks), significant_after(0))).compute_by_rank.empty());
    }
    SUBCASE("a large relative difference on calls too short to matter")
    {
        // 1 us against 3 us over 100 calls: 0.2 ms, below 1 ms.
        std::vector<Sequence> ranks{computing_rank(0, 1e-6), computing_rank(1, 3e-6)};
        CHECK(only_event(test::merge_tree(std::move(ranks), significant_after(1e-3))).compute_by_rank.empty());
    }
    SUBCASE("the default rule merges every difference")
    {
        std::vector<Sequence> ranks{computing_rank(0, 1e-3), computing_rank(1, 1)};
        CHECK(only_event(test::merge_tree(std::move(ranks))).compute_by_rank.empty());
    }
}

TEST_CASE("an event keeps at most a few groups of ranks' times, each rank in one of them")
{
    // 32 ranks, every one 10% slower than the one before: the closest merge until few enough.
    std::vector<Sequence> ranks;
    double seconds = 1e-3;
    for (Rank r = 0; r < 32; ++r, seconds *= 1.1) ranks.push_back(computing_rank(r, seconds));
    const Event e = only_event(test::merge_tree(std::move(ranks), significant_after(1e-3)));
    CHECK(e.compute_by_rank.size() == kMaxComputeGroups);
    int64_t covered = 0;
    for (const auto& group : e.compute_by_rank) covered += group.ranks.size();
    CHECK(covered == 32);
    // Each rank's time is within its group's range, so the slowest rank stays the slowest.
    seconds = 1e-3;
    for (Rank r = 0; r < 32; ++r, seconds *= 1.1) {
        CHECK(e.compute_of(r).min <= seconds * 1.000001);
        CHECK(e.compute_of(r).max >= seconds * 0.999999);
    }
    CHECK(e.compute_of(31).mean > e.compute_of(0).mean * 5);
}

TEST_CASE("two calls of one call site joined within the same ranks keep each rank's time")
{
    Event a = test::call('a', 8, 0);
    a.ranks = RankList::from_sorted({0, 1});
    a.compute = TimeStats{};
    for (int i = 0; i < 20; ++i) a.compute.add(i < 10 ? 1e-3 : 5e-3);  // rank 0: 1 ms, rank 1: 5 ms
    a.compute_by_rank = {{RankList(0), a.compute.share(10, 20)}, {RankList(1), a.compute.share(10, 20)}};
    a.compute_by_rank[0].compute.mean = a.compute_by_rank[0].compute.min = a.compute_by_rank[0].compute.max = 1e-3;
    a.compute_by_rank[1].compute.mean = a.compute_by_rank[1].compute.min = a.compute_by_rank[1].compute.max = 5e-3;
    a.compute_by_rank[0].compute.m2 = a.compute_by_rank[1].compute.m2 = 0;
    Event b = a;
    merge_compute(a, b, significant_after(1e-3));
    REQUIRE(a.compute_by_rank.size() == 2);
    CHECK(a.compute_of(0).mean == doctest::Approx(1e-3));
    CHECK(a.compute_of(1).mean == doctest::Approx(5e-3));
    CHECK(a.compute_of(0).count == 20);
    CHECK(a.compute.count == 40);
}

TEST_CASE("the time in calls of ranks that merge is the statistics of all their calls")
{
    // Rank 3 waits 40 us in each call, the others 10 us: their computation is alike.
    std::vector<Sequence> ranks;
    for (Rank r = 0; r < 4; ++r) {
        Sequence seq = computing_rank(r, 1e-3);
        Event& e = seq[0].loop().body[0].event();
        for (int i = 0; i < 100; ++i) e.in_call.add(r == 3 ? 40e-6 : 10e-6);
        ranks.push_back(std::move(seq));
    }
    const Event e = only_event(test::merge_tree(std::move(ranks), significant_after(0.01)));
    CHECK(e.compute_by_rank.empty());
    CHECK(e.in_call.count == 400);
    CHECK(e.in_call.mean == doctest::Approx((3 * 10e-6 + 40e-6) / 4));
    CHECK(e.in_call.min == doctest::Approx(10e-6));
    CHECK(e.in_call.max == doctest::Approx(40e-6));
}
