#include "merge/partial_merge.hpp"

#include "merge/loop_folding.hpp"
#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace htrace;
using htrace::test::call;
using htrace::test::calls_of;

namespace {

// One rank's partial file: `count` sends, folded as the tracer does, stopped for `reason`.
Trace part(Rank rank, int count, int32_t ranks = 4, uint64_t run_id = 7)
{
    LoopFolder folder({}, rank);
    for (int i = 0; i < count; ++i) {
        Event e = call('s', 8, rank);
        e.ranks = RankList();
        folder.append(std::move(e));
    }
    Trace t;
    t.body = test::with_rank(folder.finish(), rank);
    t.header.ranks = ranks;
    t.header.run_id = run_id;
    t.header.stops = {{rank, static_cast<uint64_t>(count), "got SIGTERM"}};
    return t;
}

std::vector<std::string> names(size_t n)
{
    std::vector<std::string> out;
    for (size_t i = 0; i < n; ++i) out.push_back("part" + std::to_string(i));
    return out;
}

}  // namespace

TEST_CASE("parts given in any order merge into one trace holding each rank's own calls and where it stopped")
{
    const PartsMergeResult merged = merge_parts({part(3, 5), part(0, 7), part(1, 5)}, names(3));
    REQUIRE_MESSAGE(merged.trace.has_value(), merged.error);
    const Trace& t = *merged.trace;
    CHECK(t.header.incomplete());
    REQUIRE(t.header.stops.size() == 3);
    CHECK(t.header.stops[0].rank == 0);
    CHECK(t.header.stops[0].calls == 7);
    CHECK(t.header.stops[2].rank == 3);
    CHECK(calls_of(t.body, 0, 4).size() == 7);
    CHECK(calls_of(t.body, 1, 4).size() == 5);
    CHECK(calls_of(t.body, 2, 4).empty());  // absent: its part was not given
    CHECK(calls_of(t.body, 3, 4).size() == 5);
}

TEST_CASE("a merged trace merges again with the parts it lacks")
{
    PartsMergeResult first = merge_parts({part(0, 3), part(1, 3)}, names(2));
    REQUIRE(first.trace.has_value());
    const PartsMergeResult all = merge_parts({std::move(*first.trace), part(2, 3), part(3, 3)}, names(3));
    REQUIRE_MESSAGE(all.trace.has_value(), all.error);
    CHECK(all.trace->header.stops.size() == 4);
    for (Rank r = 0; r < 4; ++r) CHECK(calls_of(all.trace->body, r, 4).size() == 3);
}

TEST_CASE("parts of other runs, a rank given twice, a complete trace or none at all are refused, naming the part")
{
    CHECK(merge_parts({part(0, 3), part(1, 3, 4, 8)}, names(2)).error.find("part1: is of another run") == 0);
    CHECK(merge_parts({part(0, 3), part(1, 3, 5)}, names(2)).error.find("part1: has 5 ranks") == 0);
    CHECK(merge_parts({part(0, 3), part(0, 4)}, names(2)).error.find("rank 0 is in another part") != std::string::npos);
    CHECK(merge_parts({part(9, 3)}, names(1)).error.find("rank 9 is not a rank") != std::string::npos);
    Trace complete = part(0, 3);
    complete.header.stops.clear();
    CHECK(merge_parts({complete}, names(1)).error.find("complete trace") != std::string::npos);
    CHECK_FALSE(merge_parts({}, {}).trace.has_value());
}
