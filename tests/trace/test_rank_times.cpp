#include "trace/rank_times.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

using namespace htrace;

namespace {

// A rank's own events: MPI_Init, `loops` iterations of a send and a file write, MPI_Finalize.
Sequence own_calls(double compute, double in_send, double in_write, int64_t loops)
{
    const auto timed = [](Event e, double before, double inside, uint64_t calls) {
        e.compute = {};
        for (uint64_t i = 0; i < calls; ++i) {
            e.compute.add(before);
            e.in_call.add(inside);
        }
        return e;
    };
    Event init = timed(test::call('i', 0, 0, Op::Init), 0, 5.0, 1);  // not between Init's return and Finalize
    Event send = timed(test::call('s'), compute, in_send, static_cast<uint64_t>(loops));
    Event write = timed(test::call('w', 8, 0, Op::File_write), 0, in_write, static_cast<uint64_t>(loops));
    Event finalize = test::call('f', 0, 0, Op::Finalize);
    finalize.compute = {};
    finalize.compute.add(compute);
    return {Node{init}, Node{Loop{Value(loops), {Node{send}, Node{write}}}}, Node{finalize}};
}

}  // namespace

TEST_CASE("a rank's times add its computation, its time in MPI and in I/O, from MPI_Init's return to MPI_Finalize")
{
    const auto times = own_rank_times(own_calls(0.01, 0.002, 0.003, 10), 4, 0.0007);
    REQUIRE(times.has_value());
    CHECK(times->computation.min == doctest::Approx(0.11));  // 10 before the sends, 1 before MPI_Finalize
    CHECK(times->mpi.mean == doctest::Approx(0.02));
    CHECK(times->io.max == doctest::Approx(0.03));
    CHECK(times->mpi_share.mean == doctest::Approx(0.02 / 0.16));
    CHECK(times->io_share.mean == doctest::Approx(0.03 / 0.16));
    CHECK(times->mpi.min_rank == 4);
    CHECK(times->io_share.max_rank == 4);
    REQUIRE(times->tracer.has_value());  // kept apart: the shares above leave it out
    CHECK(times->tracer->mean == 0.0007);
    CHECK(times->tracer->max_rank == 4);
}

TEST_CASE("a rank with a call whose time inside was not measured has no times")
{
    Sequence calls = own_calls(0.01, 0.002, 0.003, 10);
    calls.at(1).loop().body.at(0).event().in_call = {};
    CHECK_FALSE(own_rank_times(calls, 0, 0).has_value());
}

TEST_CASE("ranks' times combine into the least, the mean over ranks and the most, whatever the order")
{
    const RankSpread two_ranks{1.0, 3, 1.5, 2.0, 5};  // ranks 3 and 5
    const RankSpread rank_1{1.0, 1, 1.0, 1.0, 1};
    const RankSpread rank_7{4.0, 7, 4.0, 4.0, 7};
    const RankSpread left = combine(combine(two_ranks, 2, rank_1, 1), 3, rank_7, 1);
    const RankSpread right = combine(rank_7, 1, combine(rank_1, 1, two_ranks, 2), 3);
    CHECK(left == right);
    CHECK(left.min == 1.0);
    CHECK(left.min_rank == 1);  // a tie goes to the lower rank
    CHECK(left.max_rank == 7);
    CHECK(left.mean == doctest::Approx((1.5 * 2 + 1.0 + 4.0) / 4));
    CHECK_FALSE(combine(std::optional<RankTimes>{}, 1, std::optional<RankTimes>{RankTimes{}}, 1).has_value());
}

TEST_CASE("the tracer's time combines where both sides have it, and is unknown where one lacks it")
{
    RankTimes rank_2;
    rank_2.tracer = RankSpread{0.5, 2, 0.5, 0.5, 2};
    RankTimes rank_6;
    rank_6.tracer = RankSpread{0.25, 6, 0.25, 0.25, 6};
    const RankTimes both = combine(rank_2, 1, rank_6, 1);
    REQUIRE(both.tracer.has_value());
    CHECK(both.tracer->min_rank == 6);
    CHECK(both.tracer->max_rank == 2);
    CHECK(both.tracer->mean == doctest::Approx(0.375));
    CHECK_FALSE(combine(rank_2, 1, RankTimes{}, 1).tracer.has_value());  // a part from before format 21
    CHECK(combine(RankTimes{}, 0, rank_6, 1).tracer == rank_6.tracer);  // an empty subtree adds nothing
}
