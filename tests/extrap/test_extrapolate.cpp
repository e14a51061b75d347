#include "extrap/extrapolate.hpp"

#include "trace/trace_check.hpp"

#include <doctest/doctest.h>

using namespace htrace;

namespace {

// A ring at `ranks` ranks: every rank sends `bytes(ranks)` to the next one, then all reduce.
Trace ring(int32_t ranks, int64_t bytes, int64_t iterations = 10)
{
    Trace t;
    t.header.ranks = ranks;
    t.header.command_line = "./ring";
    Event send;
    send.op = Op::Send;
    send.signature = 1;
    send.params = {{Role::peer, Value(int64_t{1})}, {Role::tag, Value(int64_t{0})}, {Role::bytes, Value(bytes)},
                   {Role::comm, Value(kWorldComm)}};
    send.ranks = RankList::from_sorted([&] {
        std::vector<Rank> all;
        for (Rank r = 0; r < ranks; ++r) all.push_back(r);
        return all;
    }());
    send.compute.add(1e-6);
    Event reduce = send;
    reduce.op = Op::Allreduce;
    reduce.signature = 2;
    reduce.params = {{Role::bytes, Value(int64_t{8})}, {Role::comm, Value(kWorldComm)}};
    t.body.push_back(Node{Loop{Value(iterations), {Node{send}, Node{reduce}}}});
    return t;
}

const std::vector<std::string> kNames{"a.h", "b.h", "c.h"};

}  // namespace

TEST_CASE("a ring's peer and a size that falls with the ranks carry to a larger count")
{
    // Each rank's share of 1 MiB: 1 MiB / N, a power law.
    const auto result = extrapolate({ring(4, 262144), ring(8, 131072), ring(16, 65536)}, kNames, 1024);
    REQUIRE(result.trace);
    const Trace& t = *result.trace;
    CHECK(t.header.ranks == 1024);
    CHECK(check_trace(t).empty());
    const Event& send = t.body.at(0).loop().body.at(0).event();
    CHECK(send.ranks.size() == 1024);
    CHECK(*send.find(Role::peer) == Value(int64_t{1}));
    CHECK(*send.find(Role::bytes) == Value(int64_t{1024}));
    CHECK(t.body.at(0).loop().iterations == Value(int64_t{10}));
    REQUIRE(t.header.extrapolation.size() >= 3);
    CHECK(t.header.extrapolation[0] == "from a.h (4 ranks), b.h (8 ranks), c.h (16 ranks)");
    const bool bytes_model = std::any_of(t.header.extrapolation.begin(), t.header.extrapolation.end(),
                                         [](const std::string& line) { return line.find("bytes: ") != std::string::npos; });
    CHECK(bytes_model);
}

TEST_CASE("inputs in any order give the same trace")
{
    const auto sorted = extrapolate({ring(4, 400), ring(8, 800), ring(16, 1600)}, kNames, 64);
    const auto shuffled = extrapolate({ring(16, 1600), ring(4, 400), ring(8, 800)}, {"c.h", "a.h", "b.h"}, 64);
    REQUIRE(sorted.trace);
    REQUIRE(shuffled.trace);
    CHECK(sorted.trace->body == shuffled.trace->body);
    CHECK(*sorted.trace->body.at(0).loop().body.at(0).event().find(Role::bytes) == Value(int64_t{6400}));
}

TEST_CASE("an event at some rank counts only stops the extrapolation and is named")
{
    Trace odd = ring(8, 100);
    Event extra = odd.body.at(0).loop().body.at(1).event();
    extra.signature = 3;
    odd.body.push_back(Node{extra});
    const auto result = extrapolate({ring(4, 100), odd, ring(16, 100)}, kNames, 64);
    CHECK_FALSE(result.trace);
    CHECK(result.error.find("after event 2") != std::string::npos);
    CHECK(result.error.find("some rank counts only") != std::string::npos);
}

TEST_CASE("a call site that differs between inputs is named")
{
    Trace other = ring(16, 100);
    other.body.at(0).loop().body.at(1).event().signature = 9;
    const auto result = extrapolate({ring(4, 100), ring(8, 100), other}, kNames, 64);
    CHECK_FALSE(result.trace);
    CHECK(result.error.find("event 2 (MPI_Allreduce)") != std::string::npos);
}

TEST_CASE("ranks that are no place on any grid stop the extrapolation")
{
    // Rank 1 alone sends at every count: one of the middle ranks in a row of ranks, and one of a
    // grid's first row of several.
    std::vector<Trace> traces;
    for (int32_t n : {4, 8, 16}) {
        Trace t = ring(n, 100);
        t.body.at(0).loop().body.at(0).event().ranks = RankList(1);
        traces.push_back(t);
    }
    const auto result = extrapolate(traces, kNames, 64);
    CHECK_FALSE(result.trace);
    CHECK(result.error.find("event 1 (MPI_Send)") != std::string::npos);
    CHECK(result.error.find("grid") != std::string::npos);
}

TEST_CASE("fewer than three rank counts, or another program, are refused")
{
    CHECK(extrapolate({ring(4, 100), ring(8, 100)}, {"a.h", "b.h"}, 64).error.find("three") != std::string::npos);
    CHECK(extrapolate({ring(4, 100), ring(4, 100), ring(8, 100)}, kNames, 64).error.find("each rank count once") !=
          std::string::npos);
    Trace other = ring(16, 100);
    other.header.command_line = "./other";
    CHECK(extrapolate({ring(4, 100), ring(8, 100), other}, kNames, 64).error.find("another command") != std::string::npos);
}

TEST_CASE("a size that would fall below zero is refused, not written")
{
    // 300, 200, 0 at 4, 8, 16 ranks: any model of it goes below zero by 64.
    const auto result = extrapolate({ring(4, 300), ring(8, 200), ring(16, 0)}, kNames, 64);
    CHECK_FALSE(result.trace);
    CHECK(result.error.find("would not read") != std::string::npos);
}

TEST_CASE("traces made under SimGrid, whose command lines name their rank counts, are of one program")
{
    std::vector<Trace> traces;
    for (int32_t n : {4, 8, 16}) {
        traces.push_back(ring(n, 100));
        traces.back().header.command_line = "smpimain ./ring --cfg=smpi/np:" + std::to_string(n) + " platform.xml 50";
    }
    CHECK(extrapolate(traces, kNames, 64).trace);
    traces.back().header.command_line = "smpimain ./ring --cfg=smpi/np:16 platform.xml 60";
    CHECK(extrapolate(traces, kNames, 64).error.find("another command") != std::string::npos);
}

TEST_CASE("no computation outlasts the run, however fast it grew at the inputs")
{
    // Waiting for a core on oversubscribed inputs: the time before the send grows a hundredfold
    // per doubling of the ranks, the run's length does not.
    std::vector<Trace> inputs{ring(4, 64), ring(8, 64), ring(16, 64)};
    double before_send = 1e-4;
    for (Trace& t : inputs) {
        t.header.traced_seconds = 2.0;
        Event& send = t.body.at(0).loop().body.at(0).event();
        send.compute = TimeStats{};
        for (int i = 0; i < 10 * t.header.ranks; ++i) send.compute.add(before_send);
        before_send *= 100;
    }
    const auto result = extrapolate(inputs, kNames, 256);
    REQUIRE(result.trace);
    CHECK(result.trace->header.traced_seconds == doctest::Approx(2.0));
    const TimeStats& compute = result.trace->body.at(0).loop().body.at(0).event().compute;
    CHECK(compute.mean <= 2.0);
    CHECK(compute.max <= 2.0);
    CHECK(check_trace(*result.trace).empty());
}
