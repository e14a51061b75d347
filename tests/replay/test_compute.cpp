#include "replay/compute.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using htrace::replay::ComputeBound;
using htrace::replay::default_max_compute;
using htrace::replay::default_stall_limit;

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

TEST_CASE("by default no gap of a genuine trace is cut, and the stall limit outlasts a cut gap")
{
    constexpr double kInf = std::numeric_limits<double>::infinity();
    // A gap no longer than the traced run is never cut; at least a minute.
    CHECK(default_max_compute(0.5) == 60);
    CHECK(default_max_compute(3600) == 3600);
    // A damaged header's traced time does not lift the bound.
    CHECK(default_max_compute(kInf) == 60);
    CHECK(default_max_compute(std::nan("")) == 60);
    CHECK(default_max_compute(-5) == 60);
    for (const double traced : {0.0, 0.5, 30.0, 3600.0}) {
        for (const double max_compute : {0.01, 60.0, 1000.0, default_max_compute(traced)}) {
            CAPTURE(traced);
            CAPTURE(max_compute);
            const double limit = default_stall_limit(traced, max_compute);
            CHECK(limit >= 2 * max_compute);
            CHECK(limit >= 60);
            CHECK(limit >= 10 * traced);
        }
    }
    CHECK(default_stall_limit(kInf, 60) == 120);
}
