#include "trace/value.hpp"

#include "trace/event.hpp"
#include "trace/render.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <random>

using namespace htrace;

namespace {

// Every rank in `ranks` with value_of(rank), given one rank at a time in a shuffled order: the
// canonical form must not depend on how the merge happened to meet the ranks.
Value shuffled(const std::vector<Rank>& ranks, const std::function<int64_t(Rank)>& value_of, unsigned seed)
{
    std::vector<PerRankValue> singles;
    for (Rank r : ranks) singles.push_back({value_of(r), RankList(r)});
    std::mt19937 random(seed);
    std::shuffle(singles.begin(), singles.end(), random);
    return Value(singles);
}

std::vector<Rank> first_ranks(Rank n)
{
    std::vector<Rank> out(static_cast<size_t>(n));
    for (Rank r = 0; r < n; ++r) out[static_cast<size_t>(r)] = r;
    return out;
}

void check_every_rank(const Value& v, const std::vector<Rank>& ranks, const std::function<int64_t(Rank)>& value_of)
{
    for (Rank r : ranks) {
        CAPTURE(r);
        CHECK(v.value_for(r) == value_of(r));
    }
}

}  // namespace

TEST_CASE("a value that is the rank, or rank times a block, is one entry at 4 and at 4096 ranks")
{
    const std::vector<std::pair<const char*, std::function<int64_t(Rank)>>> patterns = {
        {"key = rank", [](Rank r) { return int64_t(r); }},
        {"offset = rank * block + base", [](Rank r) { return 512 + int64_t(r) * 1'048'576; }},
        {"countdown", [](Rank r) { return 20000 - 3 * int64_t(r); }},
    };
    for (const auto& [name, value_of] : patterns) {
        for (Rank n : {4, 4096}) {
            CAPTURE(name);
            CAPTURE(n);
            const auto ranks = first_ranks(n);
            const Value v = shuffled(ranks, value_of, 7);
            REQUIRE(v.per_rank_entries().size() == 1);
            const PerRankValue entry = v.per_rank_entries().front();
            CHECK(entry.ranks == RankList::from_sorted(ranks));
            CHECK(entry.value == value_of(0));
            CHECK(entry.step == value_of(1) - value_of(0));
            check_every_rank(v, ranks, value_of);
        }
    }
}

TEST_CASE("the members of strided sub-communicators are one entry per sub-communicator")
{
    // MPI_Comm_split(world, rank % 2, rank): each rank's rank in its half is rank / 2.
    const auto ranks = first_ranks(64);
    const auto value_of = [](Rank r) { return int64_t(r / 2); };
    const Value v = shuffled(ranks, value_of, 1);
    REQUIRE(v.per_rank_entries().size() == 2);
    CHECK(v.per_rank_entries()[0] == PerRankValue{0, *RankList::parse("0-62:2"), 1});
    CHECK(v.per_rank_entries()[1] == PerRankValue{0, *RankList::parse("1-63:2"), 1});
    check_every_rank(v, ranks, value_of);
}

TEST_CASE("values that repeat across ranks stay one entry per value, as before steps existed")
{
    const auto ranks = first_ranks(16);
    const auto value_of = [](Rank r) { return int64_t(r % 2 == 0 ? 7 : -2); };
    const Value v = shuffled(ranks, value_of, 3);
    REQUIRE(v.per_rank_entries().size() == 2);
    CHECK(v.per_rank_entries()[0] == PerRankValue{-2, *RankList::parse("1-15:2"), 0});
    CHECK(v.per_rank_entries()[1] == PerRankValue{7, *RankList::parse("0-14:2"), 0});
    check_every_rank(v, ranks, value_of);
}

TEST_CASE("symbolic values such as MPI_PROC_NULL are never part of a line")
{
    // Each rank's rank in a new communicator, -1 (none) on the rank that is not a member.
    const auto ranks = first_ranks(3);
    const auto value_of = [](Rank r) { return int64_t(1 - r); };
    const Value v = shuffled(ranks, value_of, 2);
    for (const auto& entry : v.per_rank_entries()) CHECK((entry.step == 0 || entry.value >= 0));
    CHECK(v.per_rank_entries().size() == 3);
    check_every_rank(v, ranks, value_of);
}

TEST_CASE("mixed runs: lines, a constant stretch and a stray rank are each kept, and every rank reads back")
{
    std::vector<Rank> ranks = first_ranks(40);
    ranks.erase(ranks.begin() + 30);  // a rank that took no part
    const auto value_of = [](Rank r) -> int64_t {
        if (r < 12) return 100 + 8 * int64_t(r);  // offsets of 8-byte blocks
        if (r < 25) return 5;
        if (r == 25) return -1;
        return 40 - int64_t(r);  // counting down
    };
    const Value v = shuffled(ranks, value_of, 11);
    CHECK_MESSAGE(v.per_rank_entries().size() <= 5, render_value(v, Role::bytes));
    check_every_rank(v, ranks, value_of);
    CHECK_FALSE(v.value_for(30).has_value());
    CHECK_FALSE(v.value_for(40).has_value());
    CHECK(v.per_rank_range() == std::pair<int64_t, int64_t>{-1, 188});
}

TEST_CASE("the same values given in any grouping and order are one canonical value")
{
    std::mt19937 random(42);
    for (int trial = 0; trial < 200; ++trial) {
        CAPTURE(trial);
        const Rank n = 2 + static_cast<Rank>(random() % 60);
        // Values drawn from a few lines and constants, as merged traces have them.
        std::vector<int64_t> of(static_cast<size_t>(n));
        const int kind = trial % 4;
        for (Rank r = 0; r < n; ++r) {
            const int64_t noise = static_cast<int64_t>(random() % 3);
            of[static_cast<size_t>(r)] = kind == 0   ? noise
                                         : kind == 1 ? int64_t(r) * 4 + (r >= n / 2 ? 1000 : 0)
                                         : kind == 2 ? int64_t(r % 3) * 10 + int64_t(r / 3)
                                                     : (noise == 0 ? int64_t(r) : -7);
        }
        const auto ranks = first_ranks(n);
        const auto value_of = [&](Rank r) { return of[static_cast<size_t>(r)]; };
        const Value one_by_one = shuffled(ranks, value_of, static_cast<unsigned>(trial));
        // The same values as entries of the value they had, and again from the canonical entries.
        const Value grouped(one_by_one.per_rank());
        const Value again(one_by_one.per_rank_entries());
        CHECK(grouped == one_by_one);
        CHECK(again == one_by_one);
        check_every_rank(one_by_one, ranks, value_of);
        // Never more entries than distinct values.
        CHECK(one_by_one.per_rank_entries().size() <= one_by_one.per_rank().size());
    }
}

TEST_CASE("the union of two sides' values gives each rank its side's value, in the one canonical form")
{
    std::mt19937 random(99);
    for (int trial = 0; trial < 200; ++trial) {
        CAPTURE(trial);
        const Rank n = 2 + static_cast<Rank>(random() % 60);
        // Each rank on side a or b; side a exact (one value for all its ranks) on odd trials.
        std::vector<Rank> side_a;
        std::vector<Rank> side_b;
        std::vector<int64_t> of(static_cast<size_t>(n));
        const bool a_exact = trial % 2 == 1;
        for (Rank r = 0; r < n; ++r) {
            (random() % 2 == 0 ? side_a : side_b).push_back(r);
            of[static_cast<size_t>(r)] = trial % 3 == 0 ? int64_t(r) * 8 : static_cast<int64_t>(random() % 5);
        }
        if (side_a.empty() || side_b.empty()) continue;
        if (a_exact) {
            for (Rank r : side_a) of[static_cast<size_t>(r)] = 1000;
        }
        const auto value_of = [&](Rank r) { return of[static_cast<size_t>(r)]; };
        const Value a = a_exact ? Value(int64_t{1000}) : shuffled(side_a, value_of, 1);
        const Value b = shuffled(side_b, value_of, 2);
        const Value both = Value::per_rank_union(a, RankList::from_sorted(side_a), b, RankList::from_sorted(side_b));
        REQUIRE(both.is_per_rank());
        check_every_rank(both, first_ranks(n), value_of);
        CHECK(both == shuffled(first_ranks(n), value_of, 3));
    }
}

TEST_CASE("per_rank lists each distinct value once with the ranks that had it")
{
    const Value v(std::vector<PerRankValue>{{0, *RankList::parse("0-3"), 1}, {2, *RankList::parse("4-5"), 0}});
    const auto by_value = v.per_rank();
    REQUIRE(by_value.size() == 4);
    CHECK(by_value[0] == PerRankValue{0, RankList(0), 0});
    CHECK(by_value[1] == PerRankValue{1, RankList(1), 0});
    CHECK(by_value[2] == PerRankValue{2, RankList::from_sorted({2, 4, 5}), 0});
    CHECK(by_value[3] == PerRankValue{3, RankList(3), 0});
}

TEST_CASE("h-dump shows a step as the i-th rank's value")
{
    const auto ranks = first_ranks(128);
    CHECK(render_value(shuffled(ranks, [](Rank r) { return int64_t(r); }, 5), Role::key) == "{0+1*i@0-127}");
    CHECK(render_value(shuffled(first_ranks(4), [](Rank r) { return 10 - 2 * int64_t(r); }, 5), Role::bytes) ==
          "{10-2*i@0-3}");
}

TEST_CASE("a value of any kind copies and moves whole, and a parameter stays small")
{
    Histogram sizes{HistogramConfig{}};
    for (int i = 0; i < 100; ++i) sizes.add(i % 7, i % 4);
    const std::vector<Value> values{
        Value(int64_t{-5}), Value(INT64_MIN),
        Value(std::vector<PerRankValue>{{3, RankList::from_sorted({0, 1, 2})}, {9, RankList(3)}}),
        Value(std::vector<PerRankValue>{{0, RankList::from_sorted({0, 1, 2, 3, 4, 5, 6, 7}), 4096}}),
        Value(sizes), Value(sizes, true)};
    for (const Value& v : values) {
        Value copy = v;
        CHECK(copy == v);
        Value moved = std::move(copy);
        CHECK(moved == v);
        copy = moved;  // a moved-from value takes a value again
        CHECK(copy == v);
        CHECK(copy.alike_on_every_rank() == v.alike_on_every_rank());
        if (v.is_histogram()) {
            copy.histogram().add(1000, 0);  // a copy's histogram is its own
            CHECK(copy != v);
        }
    }
    CHECK(values[4] != values[5]);
    // A replaying rank holds every parameter of the trace: a role and a value, with no padding.
    CHECK(sizeof(Param) <= 16);
}
