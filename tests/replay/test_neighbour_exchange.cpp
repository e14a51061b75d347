#include "replay/neighbour_exchange.hpp"

#include <doctest/doctest.h>

#include <numeric>

using namespace htrace;
using namespace htrace::replay;

namespace {

// Every member's plan, checked for agreement: what a sender puts in a destination slot is what the
// receiver takes from the matching source slot.
std::vector<SlotCounts> plans(const std::vector<const Topology*>& topologies, const std::vector<int64_t>& sent,
                              const std::vector<int64_t>& received)
{
    std::vector<SlotCounts> all;
    for (size_t m = 0; m < topologies.size(); ++m) {
        auto plan = exact_exchange(topologies, sent, received, static_cast<int64_t>(m));
        REQUIRE(plan.has_value());
        all.push_back(*plan);
    }
    const auto n = static_cast<int64_t>(topologies.size());
    for (int64_t r = 0; r < n; ++r) {
        const Neighbours mine = neighbours_of(*topologies[size_t(r)], r, n);
        for (size_t k = 0; k < mine.sources.size(); ++k) {
            const int64_t s = mine.sources[k];
            if (s < 0) continue;
            const Neighbours theirs = neighbours_of(*topologies[size_t(s)], s, n);
            const auto slot = sending_slot(topologies[size_t(r)]->cartesian, mine, k, r, theirs);
            REQUIRE(slot.has_value());
            CHECK(all[size_t(r)].receive[k] == all[size_t(s)].send[*slot]);
        }
    }
    return all;
}

int64_t sum(const std::vector<int64_t>& v) { return std::accumulate(v.begin(), v.end(), int64_t{0}); }

}  // namespace

TEST_CASE("every member of a ring sends and receives its recorded totals, and the two sides of each pair agree")
{
    const Topology ring{false, {}, {}, {1, 4}, {1, 4}};  // 5 ranks, both neighbours each way
    const std::vector<const Topology*> topologies(5, &ring);
    const std::vector<int64_t> sent{10, 20, 30, 40, 50};
    const std::vector<int64_t> received{30, 15, 25, 35, 45};  // a plan exists: 10+20+30+40+50 = 150
    const auto all = plans(topologies, sent, received);
    for (size_t m = 0; m < 5; ++m) {
        CHECK(sum(all[m].send) == sent[m]);
        CHECK(sum(all[m].receive) == received[m]);
    }
}

TEST_CASE("bytes a grid's edge counts for missing neighbours go nowhere and come from nowhere")
{
    const Topology line{true, {3}, {0}, {}, {}};  // 0 - 1 - 2, no wrap
    const std::vector<const Topology*> topologies(3, &line);
    // Rank 0 counts 8 bytes for its missing left neighbour; rank 2 receives 4 from its missing right one.
    const std::vector<int64_t> sent{8 + 4, 4 + 4, 4 + 0};
    const std::vector<int64_t> received{4, 4 + 4, 4 + 4};
    const auto all = plans(topologies, sent, received);
    for (size_t m = 0; m < 3; ++m) {
        CHECK(sum(all[m].send) == sent[m]);
        CHECK(sum(all[m].receive) == received[m]);
    }
}

TEST_CASE("totals no plan can meet give no plan")
{
    const Topology ring{false, {}, {}, {1}, {1}};  // 0 -> 1 -> 0, each one neighbour
    const std::vector<const Topology*> topologies(2, &ring);
    CHECK_FALSE(exact_exchange(topologies, {10, 10}, {10, 20}, 0).has_value());
}
