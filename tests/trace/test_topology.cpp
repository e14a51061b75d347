#include "trace/topology.hpp"

#include "trace/event.hpp"

#include <doctest/doctest.h>

using namespace htrace;

TEST_CASE("a topology's text reads back as the same topology")
{
    Topology grid{true, {4, 2, 3}, {1, 0, 1}, {}, {}};
    Topology graph{false, {}, {}, {1, 3, 3}, {2}};
    Topology lonely{false, {}, {}, {}, {}};
    for (const Topology& t : {grid, graph, lonely}) {
        CAPTURE(topology_text(t));
        const auto back = parse_topology(topology_text(t));
        REQUIRE(back.has_value());
        CHECK(*back == t);
    }
    CHECK(topology_key(topology_text(grid)) != topology_key(topology_text(graph)));
    CHECK(topology_key(topology_text(grid)) >= 0);
}

TEST_CASE("damaged topology text is refused, not read as a topology")
{
    for (const char* text : {"", "cart", "cart dims=4,2 periods=1", "cart dims=4,x periods=1,0", "cart dims=0 periods=0",
                             "cart dims=4 periods=2", "cart dims=65536,65536,65536 periods=0,0,0",
                             "graph sources=-1 destinations=", "graph sources=1, destinations=1", "torus dims=2 periods=1",
                             "graph sources=1 destinations=1 extra=1"}) {
        CAPTURE(text);
        CHECK_FALSE(parse_topology(text).has_value());
    }
}

TEST_CASE("a grid's neighbours are MPI's: negative then positive in each dimension, none past an edge that does not wrap")
{
    // 3 x 2, periodic in the second dimension only; row-major ranks: rank 3 is (1, 1).
    const Topology grid{true, {3, 2}, {0, 1}, {}, {}};
    const Neighbours n = neighbours_of(grid, 3, 6);
    CHECK(n.sources == std::vector<int64_t>{1, 5, 2, 2});
    CHECK(n.destinations == n.sources);
    const Neighbours corner = neighbours_of(grid, 0, 6);
    CHECK(corner.sources == std::vector<int64_t>{kProcNull, 2, 1, 1});
}

TEST_CASE("a graph's neighbours are its relative ranks taken from the rank, and slots pair the k-th listing of each")
{
    // A ring of 4 where each rank lists its right neighbour twice as a destination.
    const Topology t{false, {}, {}, {3, 3}, {1, 1}};
    const Neighbours two = neighbours_of(t, 2, 4);
    CHECK(two.sources == std::vector<int64_t>{1, 1});
    CHECK(two.destinations == std::vector<int64_t>{3, 3});
    const Neighbours one = neighbours_of(t, 1, 4);
    CHECK(sending_slot(false, two, 0, 2, one) == size_t{0});
    CHECK(sending_slot(false, two, 1, 2, one) == size_t{1});
    // In a grid, what is sent towards the positive side arrives from the negative side.
    const Topology ring{true, {4}, {1}, {}, {}};
    CHECK(sending_slot(true, neighbours_of(ring, 2, 4), 0, 2, neighbours_of(ring, 1, 4)) == size_t{1});
}
