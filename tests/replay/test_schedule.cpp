#include "replay/schedule.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <map>
#include <tuple>
#include <vector>

using namespace htrace;
using namespace htrace::replay;

namespace {

Value histogram_value(const std::map<int64_t, uint64_t>& counts, bool peers = false)
{
    Histogram h(HistogramConfig{});
    if (peers) h.keep_seen_values();
    for (const auto& [value, count] : counts) h.add(value, 0, count);
    return Value(std::move(h));
}

Event event(Op op, RankList ranks, std::vector<Param> params, double compute = 0)
{
    Event e;
    e.op = op;
    e.signature = static_cast<uint64_t>(op) + 1;
    e.params = std::move(params);
    e.ranks = std::move(ranks);
    if (compute > 0) e.compute.add(compute);
    return e;
}

RankList all(int32_t ranks)
{
    std::vector<Rank> r;
    for (Rank i = 0; i < ranks; ++i) r.push_back(i);
    return RankList::from_sorted(r);
}

// Four ranks exchanging with drawn peers and sizes in loops whose counts are histograms, with a
// collective in an outer loop of drawn count: everything replay draws.
Trace drawn_trace()
{
    Trace t;
    t.header.ranks = 4;
    const Event isend = event(Op::Isend, all(4),
                              {{Role::peer, histogram_value({{1, 30}, {3, 30}}, true)},
                               {Role::tag, Value(int64_t{5})},
                               {Role::bytes, histogram_value({{100, 20}, {200, 20}, {400, 20}})},
                               {Role::comm, Value(int64_t{0})}},
                              1e-6);
    const Event irecv = event(Op::Irecv, all(4),
                              {{Role::peer, Value(int64_t{kAnySource})}, {Role::tag, Value(int64_t{5})},
                               {Role::recv_bytes, Value(int64_t{400})}, {Role::comm, Value(int64_t{0})}});
    const Event waitall = event(Op::Waitall, all(4), {{Role::requests, Value(int64_t{2})}});
    const Event allreduce = event(Op::Allreduce, all(4), {{Role::bytes, Value(int64_t{8})}, {Role::comm, Value(int64_t{0})}});
    Sequence inner = {Node{irecv}, Node{isend}, Node{waitall}};
    Sequence outer = {Node{Loop{histogram_value({{2, 6}, {4, 6}}), inner}}, Node{allreduce}};
    t.body = {Node{Loop{histogram_value({{3, 1}, {5, 1}}), outer}}};
    return t;
}

std::vector<ScheduledCall> schedule_of(const Trace& t, uint64_t seed, Rank rank, bool compute = true)
{
    std::vector<ScheduledCall> calls;
    generate_schedule(t, seed, rank, [&](const ScheduledCall& c) { calls.push_back(c); }, ScheduleOptions{ReplayMode::paired, compute});
    return calls;
}

using Message = std::tuple<Rank, Rank, int64_t, int64_t>;  // from, to, tag, bytes

}  // namespace

TEST_CASE("every rank agrees on every drawn message: each send has its receive, in the same order")
{
    const Trace t = drawn_trace();
    std::vector<Message> sent;
    std::map<std::pair<Rank, Rank>, std::vector<Message>> sends_between;
    std::map<std::pair<Rank, Rank>, std::vector<Message>> receives_between;
    std::vector<size_t> collectives;
    for (Rank r = 0; r < 4; ++r) {
        size_t count = 0;
        for (const auto& c : schedule_of(t, 11, r)) {
            if (c.kind == CallKind::send) sends_between[{r, c.peer}].push_back({r, c.peer, c.tag, c.bytes});
            if (c.kind == CallKind::receive) receives_between[{c.peer, r}].push_back({c.peer, r, c.tag, c.bytes});
            if (c.kind == CallKind::collective) ++count;
        }
        collectives.push_back(count);
    }
    CHECK(!sends_between.empty());
    CHECK(sends_between == receives_between);
    // The collective's loop count is drawn once for everyone.
    CHECK(collectives[0] > 0);
    for (size_t count : collectives) CHECK(count == collectives[0]);
}

TEST_CASE("the same seed gives the same schedule; another seed draws other values")
{
    const Trace t = drawn_trace();
    bool differs = false;
    for (Rank r = 0; r < 4; ++r) {
        CHECK(schedule_of(t, 5, r) == schedule_of(t, 5, r));
        differs = differs || schedule_of(t, 5, r) != schedule_of(t, 6, r);
    }
    CHECK(differs);
}

TEST_CASE("recorded receives are not issued, requests complete at waits and at the end, none twice")
{
    const Trace t = drawn_trace();
    for (Rank r = 0; r < 4; ++r) {
        std::map<RequestId, int> state;  // 1 pending, 2 completed
        for (const auto& c : schedule_of(t, 3, r)) {
            CHECK(c.op != Op::Recv);
            if (c.request != 0) {
                CHECK(state[c.request] == 0);
                state[c.request] = 1;
            }
            if (c.kind == CallKind::complete) {
                for (RequestId id : c.requests) {
                    CHECK(state[id] == 1);
                    state[id] = 2;
                }
            }
            // Nothing is pending when a collective starts.
            if (c.kind == CallKind::collective) {
                for (const auto& [id, s] : state) CHECK(s == 2);
            }
        }
        for (const auto& [id, s] : state) CHECK(s == 2);
    }
}

TEST_CASE("a lossless trace replays each rank's sends as recorded, relative peers resolved")
{
    // A ring of 5: every rank sends 3 times to its right neighbour, rank 4 wraps to 0.
    Trace t;
    t.header.ranks = 5;
    const Event send = event(Op::Send, all(5),
                             {{Role::peer, Value(int64_t{1})}, {Role::tag, Value(int64_t{9})},
                              {Role::bytes, Value(std::vector<PerRankValue>{{64, RankList(0)},
                                                                            {128, RankList::from_sorted({1, 2, 3, 4})}})},
                              {Role::comm, Value(int64_t{0})}},
                             2e-6);
    t.body = {Node{Loop{Value(int64_t{3}), {Node{send}}}}};
    for (Rank r = 0; r < 5; ++r) {
        const auto calls = schedule_of(t, 1, r);
        std::vector<ScheduledCall> sends;
        std::vector<ScheduledCall> receives;
        double computed = 0;
        for (const auto& c : calls) {
            if (c.kind == CallKind::send) sends.push_back(c);
            if (c.kind == CallKind::receive) receives.push_back(c);
            if (c.kind == CallKind::compute) computed += c.seconds;
        }
        REQUIRE(sends.size() == 3);
        for (const auto& s : sends) {
            CHECK(s.op == Op::Send);
            CHECK(s.peer == (r + 1) % 5);
            CHECK(s.bytes == (r == 0 ? 64 : 128));
            CHECK(s.tag == 9);
        }
        REQUIRE(receives.size() == 3);
        for (const auto& rcv : receives) CHECK(rcv.peer == (r + 4) % 5);
        CHECK(computed == doctest::Approx(3 * 2e-6));
        for (const auto& c : schedule_of(t, 1, r, false)) CHECK(c.kind != CallKind::compute);
    }
}
