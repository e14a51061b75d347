#include "replay/compute.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using htrace::replay::ComputeBound;

// Issue 26: a computation time of 10^6 s per call made replay sleep for ever.
TEST_CASE("computation gaps longer than --max-compute are cut to it and counted")
{
    ComputeBound bound(60);
    CHECK(bound.cut(0.5) == 0.5);
    CHECK(bound.cut(60) == 60);
    CHECK(bound.gaps_cut() == 0);
    CHECK(bound.longest_cut() == 0);
    CHECK(bound.cut(1e6) == 60);
    CHECK(bound.cut(61) == 60);
    CHECK(bound.cut(std::numeric_limits<double>::infinity()) == 60);
    CHECK(bound.cut(std::nan("")) == 0);
    CHECK(bound.gaps_cut() == 4);
    CHECK(bound.longest_cut() == std::numeric_limits<double>::infinity());
    ComputeBound unbounded;
    CHECK(unbounded.cut(1e6) == 1e6);
    CHECK(unbounded.gaps_cut() == 0);
}
