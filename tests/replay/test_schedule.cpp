#include "replay/schedule.hpp"

#include "support/trace_builders.hpp"
#include "trace/completion_set.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

using namespace htrace;
using namespace htrace::replay;

using htrace::test::loop;

namespace {

using Positions = std::vector<uint32_t>;

// The one value of a completed set of a few positions.
int64_t completed(const Positions& positions)
{
    return encode_completed_set(positions).front();
}

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

std::vector<ScheduledCall> schedule_of(const Trace& t, uint64_t seed, Rank rank, bool compute = true,
                                       ReplayMode mode = ReplayMode::paired)
{
    std::vector<ScheduledCall> calls;
    generate_schedule(t, seed, rank, [&](const ScheduledCall& c) { calls.push_back(c); },
                      ScheduleOptions{mode, compute});
    return calls;
}

std::vector<ScheduledCall> causal_schedule_of(const Trace& t, Rank rank)
{
    return schedule_of(t, 1, rank, false, ReplayMode::causal);
}

Param param(Role role, int64_t value) { return {role, Value(value)}; }

// One kind of call of a schedule, as (peer, tag) pairs in order, to compare with what a program did.
std::vector<std::pair<Rank, int64_t>> peers_of(const std::vector<ScheduledCall>& calls, CallKind kind)
{
    std::vector<std::pair<Rank, int64_t>> out;
    for (const auto& c : calls) {
        if (c.kind == kind) out.emplace_back(c.peer, c.tag);
    }
    return out;
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

TEST_CASE("paired replay completes every request once, none before it exists")
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
        }
        for (const auto& [id, s] : state) CHECK(s == 2);
    }
}

TEST_CASE("drawn relative peers shift all participants alike, so every rank receives what it sends")
{
    // Four ranks send to a drawn offset (+1 or +3) and post one receive from a drawn source, in a
    // loop of 6. Drawn for each rank alone, offsets make a random graph: some ranks get two messages
    // in an instance and others none, and replay has receives without a message.
    Trace t;
    t.header.ranks = 4;
    const Value offsets = histogram_value({{1, 12}, {3, 12}}, true);
    const Event isend = event(Op::Isend, all(4), {{Role::peer, offsets}, param(Role::tag, 5),
                                                  param(Role::bytes, 8), param(Role::comm, 0)});
    const Event irecv = event(Op::Irecv, all(4), {{Role::peer, offsets}, param(Role::tag, 5),
                                                  param(Role::recv_bytes, 8), param(Role::comm, 0)});
    const Event waitall = event(Op::Waitall, all(4), {param(Role::requests, 2), param(Role::completed_set, -2)});
    t.body = {loop(6, {Node{irecv}, Node{isend}, Node{waitall}})};
    for (uint64_t seed = 1; seed <= 10; ++seed) {
        CAPTURE(seed);
        std::map<Rank, int> received;
        for (Rank r = 0; r < 4; ++r) {
            const ScheduleSummary summary = generate_schedule(
                t, seed, r, [&](const ScheduledCall& c) { received[r] += c.kind == CallKind::receive; },
                ScheduleOptions{ReplayMode::paired, false});
            CHECK(summary.unpaired_receives == 0);
            CHECK(summary.fallback_messages == 0);
        }
        for (Rank r = 0; r < 4; ++r) CHECK(received[r] == 6);
    }
}

TEST_CASE("a histogram alike on every rank is drawn once per instance for all participants")
{
    // A level's message size, the same on every rank in each iteration: drawn alike, every
    // participant of an instance sends the same size, where drawn one by one they would differ.
    Trace t;
    t.header.ranks = 4;
    Histogram sizes(HistogramConfig{});
    for (int64_t size : {32, 128, 512}) sizes.add(size, 0, 8);
    for (bool alike : {true, false}) {
        CAPTURE(alike);
        const Event send = event(Op::Isend, all(4), {param(Role::peer, 1), param(Role::tag, 5),
                                                     {Role::bytes, Value(sizes, alike)}, param(Role::comm, 0)});
        t.body = {loop(6, {Node{send}})};
        std::map<Rank, std::vector<int64_t>> sent;
        for (Rank r = 0; r < 4; ++r) {
            for (const auto& c : schedule_of(t, 7, r)) {
                if (c.kind == CallKind::send) sent[r].push_back(c.bytes);
            }
        }
        REQUIRE(sent[0].size() == 6);
        bool all_equal = true;
        for (Rank r = 1; r < 4; ++r) all_equal = all_equal && sent[r] == sent[0];
        CHECK(all_equal == alike);
    }
}

TEST_CASE("a call notes when it returned only where a computation long enough to spin for follows")
{
    // Barriers with 1 ms, 20 ns and 1 ms computed before them: the 20 ns pass before a clock read
    // could measure them, so the call before them need not note its return.
    Trace t;
    t.header.ranks = 2;
    const auto barrier = [](double compute) {
        return Node{event(Op::Barrier, all(2), {param(Role::comm, 0)}, compute)};
    };
    t.body = {barrier(1e-3), barrier(2e-8), barrier(1e-3)};
    std::vector<bool> timed;
    std::vector<double> computed;
    for (const auto& call : schedule_of(t, 1, 0)) {
        if (call.kind == CallKind::compute) computed.push_back(call.seconds);
        else timed.push_back(call.times_return);
    }
    CHECK(computed == std::vector<double>{1e-3, 2e-8, 1e-3});
    REQUIRE(timed.size() == 3);
    CHECK_FALSE(timed[0]);
    CHECK(timed[1]);
    // Without computation nothing counts from a return.
    for (const auto& call : schedule_of(t, 1, 0, false)) CHECK_FALSE(call.times_return);
}

TEST_CASE("causal replay passes a token ring hop by hop, whatever order the walk puts the ranks in")
{
    // Rank 0 sends, then receives from the last rank; the others receive, then send: the merge puts
    // rank 0's calls first, so the last rank's send comes after rank 0's receive in the walk.
    constexpr int32_t ranks = 4;
    Trace t;
    t.header.ranks = ranks;
    auto call = [](Op op, RankList who, int64_t relative) {
        const Role size = op == Op::Send ? Role::bytes : Role::recv_bytes;
        return Node{event(op, std::move(who), {param(Role::peer, relative), param(Role::tag, 7), param(size, 32),
                                               param(Role::comm, 0)})};
    };
    const RankList others = RankList::from_sorted({1, 2, 3});
    t.body = {Node{Loop{Value(int64_t{2}), {call(Op::Send, RankList(0), 1), call(Op::Recv, RankList(0), ranks - 1)}}},
              Node{Loop{Value(int64_t{2}), {call(Op::Recv, others, ranks - 1), call(Op::Send, others, 1)}}}};
    for (Rank r = 0; r < ranks; ++r) {
        CAPTURE(r);
        CHECK(causal_replay_obstacle(t, 1, r).empty());
        const auto calls = causal_schedule_of(t, r);
        std::vector<std::pair<CallKind, Rank>> order;
        for (const auto& c : calls) order.emplace_back(c.kind, c.peer);
        const Rank left = (r + ranks - 1) % ranks;
        const Rank right = (r + 1) % ranks;
        const std::pair<CallKind, Rank> send{CallKind::send, right};
        const std::pair<CallKind, Rank> receive{CallKind::receive, left};
        if (r == 0) {
            CHECK(order == std::vector<std::pair<CallKind, Rank>>{send, receive, send, receive});
        } else {
            CHECK(order == std::vector<std::pair<CallKind, Rank>>{receive, send, receive, send});
        }
        for (const auto& c : calls) {
            if (c.kind == CallKind::receive) CHECK(c.request == 0);  // a blocking receive, waited where it was
        }
    }
}

TEST_CASE("causal replay posts a wildcard MPI_Irecv from the source its completion says it matched")
{
    // Rank 0 posts two MPI_Irecv(MPI_ANY_SOURCE) and completes them in one MPI_Waitall, which
    // recorded that the older matched rank 2 and the newer rank 1; ranks 1 and 2 each send to it.
    Trace t;
    t.header.ranks = 3;
    const Event irecv = event(Op::Irecv, RankList(0), {param(Role::peer, kAnySource), param(Role::tag, 4),
                                                       param(Role::recv_bytes, 8), param(Role::comm, 0)});
    const Event waitall = event(Op::Waitall, RankList(0), {param(Role::requests, 2), param(Role::matched_peer, 2),
                                                           param(Role::matched_peer, 1),
                                                           param(Role::completed_set, completed({0, 1}))});
    const Event send = event(Op::Send, RankList::from_sorted({1, 2}),
                             {{Role::peer, Value(std::vector<PerRankValue>{{2, RankList(1)}, {1, RankList(2)}})},
                              param(Role::tag, 4), param(Role::bytes, 8), param(Role::comm, 0)});
    t.body = {Node{irecv}, Node{irecv}, Node{waitall}, Node{send}};
    for (Rank r = 0; r < 3; ++r) CHECK(causal_replay_obstacle(t, 1, r).empty());
    const auto calls = causal_schedule_of(t, 0);
    CHECK(peers_of(calls, CallKind::receive) == std::vector<std::pair<Rank, int64_t>>{{2, 4}, {1, 4}});
    REQUIRE(calls.size() == 3);
    CHECK(calls[2].kind == CallKind::complete);
    CHECK(calls[2].op == Op::Waitall);
    CHECK(calls[2].requests == std::vector<RequestId>{calls[0].request, calls[1].request});
}

TEST_CASE("causal replay completes the requests the traced rank completed, where it completed them")
{
    // Irecv a, Irecv b, Isend c; Wait(b); Waitall(a, c): positions count from the newest pending.
    Trace t;
    t.header.ranks = 2;
    auto irecv = [](int64_t tag) {
        return Node{event(Op::Irecv, RankList::from_sorted({0, 1}), {param(Role::peer, 1), param(Role::tag, tag),
                                                                    param(Role::recv_bytes, 8), param(Role::comm, 0)})};
    };
    const Node isend{event(Op::Isend, RankList::from_sorted({0, 1}),
                           {param(Role::peer, 1), param(Role::tag, 1), param(Role::bytes, 8), param(Role::comm, 0)})};
    const Node isend2{event(Op::Isend, RankList::from_sorted({0, 1}),
                            {param(Role::peer, 1), param(Role::tag, 2), param(Role::bytes, 8), param(Role::comm, 0)})};
    const Node wait_b{event(Op::Wait, RankList::from_sorted({0, 1}),
                            {param(Role::requests, 1), param(Role::completed_set, completed({2}))})};
    const Node wait_rest{event(Op::Waitall, RankList::from_sorted({0, 1}),
                               {param(Role::requests, 3), param(Role::completed_set, completed({0, 1, 2}))})};
    t.body = {irecv(1), irecv(2), isend, isend2, wait_b, wait_rest};
    CHECK(causal_replay_obstacle(t, 1, 0).empty());
    const auto calls = causal_schedule_of(t, 0);
    REQUIRE(calls.size() == 6);
    CHECK(calls[4].kind == CallKind::complete);
    CHECK(calls[4].requests == std::vector<RequestId>{calls[1].request});  // the second Irecv: tag 2
    CHECK(calls[5].requests == std::vector<RequestId>{calls[0].request, calls[2].request, calls[3].request});
}

TEST_CASE("causal replay is refused where values were drawn or a message has no receive")
{
    Trace drawn = drawn_trace();
    CHECK(causal_replay_obstacle(drawn, 1, 0).find("drawn") != std::string::npos);

    Trace unreceived;
    unreceived.header.ranks = 2;
    unreceived.body = {Node{event(Op::Send, RankList(0), {param(Role::peer, 1), param(Role::tag, 3),
                                                          param(Role::bytes, 8), param(Role::comm, 0)})}};
    CHECK(causal_replay_obstacle(unreceived, 1, 0).empty());
    CHECK(causal_replay_obstacle(unreceived, 1, 1).find("rank 1 has 1 messages from rank 0") != std::string::npos);

    // Below precision 100, in a trace with drawn values, the parts of a collective the merge left apart
    // are joined where the last of them is met, out of the ranks' own order: replay is then paired.
    // In a lossless trace, or one where nothing was drawn, each part is its ranks' own calls, and is
    // replayed where it is.
    Trace apart;
    apart.header.ranks = 2;
    apart.header.precision = 90;
    const Node drawn_send{event(Op::Send, RankList(0), {param(Role::peer, 1), param(Role::tag, 3),
                                                        {Role::bytes, histogram_value({{8, 1}, {16, 1}})},
                                                        param(Role::comm, 0)})};
    const Node receive{event(Op::Recv, RankList(1), {param(Role::peer, 0), param(Role::tag, 3),
                                                     param(Role::recv_bytes, 16), param(Role::comm, 0)})};
    const Node barrier_of_0{event(Op::Barrier, RankList(0), {param(Role::comm, 0)})};
    const Node barrier_of_1{event(Op::Barrier, RankList(1), {param(Role::comm, 0)})};
    auto barriers_of = [&](Rank rank) {
        int barriers = 0;
        for (const auto& call : schedule_of(apart, 1, rank, false)) barriers += call.op == Op::Barrier ? 1 : 0;
        return barriers;
    };
    apart.body = {barrier_of_0, barrier_of_1, drawn_send, receive};
    CHECK(causal_replay_obstacle(apart, 1, 0).find("1 collective instances the merge left in parts are issued where "
                                                   "their last part is") != std::string::npos);
    CHECK(barriers_of(0) == 1);
    CHECK(barriers_of(1) == 1);
    // Rank 0's drawn counts gave it three parts, rank 1's one: the ranks agree on the mean, two.
    apart.body = {barrier_of_0, barrier_of_0, barrier_of_0, barrier_of_1, drawn_send, receive};
    CHECK(barriers_of(0) == 2);
    CHECK(barriers_of(1) == 2);
    apart.body = {barrier_of_0, barrier_of_1};
    CHECK(causal_replay_obstacle(apart, 1, 0).empty());
    apart.header.precision = 100;
    CHECK(causal_replay_obstacle(apart, 1, 0).empty());
    int barriers = 0;
    generate_schedule(apart, 1, 1, [&](const ScheduledCall& call) { barriers += call.op == Op::Barrier ? 1 : 0; },
                      {ReplayMode::causal, false});
    CHECK(barriers == 1);
    apart.body = {Node{event(Op::Barrier, all(2), {param(Role::comm, 0)})}};
    apart.header.precision = 90;
    CHECK(causal_replay_obstacle(apart, 1, 0).empty());
}

namespace {

Value alike(Value histogram)
{
    histogram.set_alike_on_every_rank(true);
    return histogram;
}

// Two ranks exchange with each other (MPI_Irecv, MPI_Send, MPI_Wait) as often as a drawn count says,
// then meet in an MPI_Allreduce, three times: a convergence loop. `alike_count`: whether both ranks
// recorded the same counts, so that replay draws one count for both.
Trace exchange_until_converged(bool alike_count)
{
    Trace t;
    t.header.ranks = 2;
    const RankList both = all(2);
    const Node irecv{event(Op::Irecv, both, {param(Role::peer, 1), param(Role::tag, 7), param(Role::recv_bytes, 32),
                                             param(Role::comm, 0)})};
    const Node send{event(Op::Send, both, {param(Role::peer, 1), param(Role::tag, 7), param(Role::bytes, 32),
                                           param(Role::comm, 0)})};
    const Node wait{event(Op::Wait, both, {param(Role::requests, 1), param(Role::completed_set, completed({0}))})};
    const Node allreduce{event(Op::Allreduce, both, {param(Role::bytes, 8), param(Role::comm, 0)})};
    Value counts = histogram_value({{38, 2}, {40, 2}, {42, 2}});
    if (alike_count) counts = alike(counts);
    t.body = {Node{Loop{Value(int64_t{3}), {Node{Loop{counts, {irecv, send, wait}}}, allreduce}}}};
    return t;
}

}  // namespace

TEST_CASE("causal replay goes through a loop whose count every participant draws alike, iteration by iteration")
{
    const Trace t = exchange_until_converged(true);
    std::vector<std::vector<int>> exchanges(2);  // per rank, per Allreduce: the receives before it
    for (Rank r = 0; r < 2; ++r) {
        CAPTURE(r);
        CHECK(causal_replay_obstacle(t, 1, r).empty());
        int received = 0;
        for (const auto& c : causal_schedule_of(t, r)) {
            if (c.kind == CallKind::receive) {
                CHECK(c.peer == 1 - r);
                ++received;
            } else if (c.kind == CallKind::collective) {
                exchanges[static_cast<size_t>(r)].push_back(received);
                received = 0;
            }
        }
    }
    // Each instance iterates as one recorded count on both ranks, so each receive has the other's send.
    CHECK(exchanges[0] == exchanges[1]);
    REQUIRE(exchanges[0].size() == 3);
    for (int n : exchanges[0]) CHECK((n == 38 || n == 40 || n == 42));

    // Where each rank draws its own count, they would iterate differently: paired.
    const Trace apart = exchange_until_converged(false);
    CHECK(causal_replay_obstacle(apart, 1, 0).find("for each rank alone") != std::string::npos);
}

TEST_CASE("causal replay is refused where an iteration of a loop whose count was drawn for all is not closed")
{
    // Rank 0 sends to rank 1 as often as a drawn count says, twice; rank 1 receives the 5 messages in
    // a loop of its own afterwards. The totals pair up (the draws take the recorded 2 and 3), but a
    // first instance drawn as 3 would wait, under rendezvous, for a receive rank 1 makes only after
    // it has sent something back; the iteration is not closed, so causal replay must not go there.
    Trace t;
    t.header.ranks = 2;
    const Node send{event(Op::Send, RankList(0), {param(Role::peer, 1), param(Role::tag, 1), param(Role::bytes, 8),
                                                  param(Role::comm, 0)})};
    const Node recv{event(Op::Recv, RankList(1), {param(Role::peer, 1), param(Role::tag, 1),
                                                  param(Role::recv_bytes, 8), param(Role::comm, 0)})};
    t.body = {Node{Loop{Value(int64_t{2}), {Node{Loop{alike(histogram_value({{2, 1}, {3, 1}})), {send}}}}}},
              Node{Loop{Value(int64_t{5}), {recv}}}};
    CHECK(causal_replay_obstacle(t, 1, 0).empty());
    CHECK(causal_replay_obstacle(t, 1, 1).find("sends this rank messages it receives after it") != std::string::npos);

    // Requests made in an iteration and completed after the loop: not closed either.
    Trace late;
    late.header.ranks = 2;
    const Node irecv{event(Op::Irecv, all(2), {param(Role::peer, 1), param(Role::tag, 1), param(Role::recv_bytes, 8),
                                               param(Role::comm, 0)})};
    const Node isend{event(Op::Isend, all(2), {param(Role::peer, 1), param(Role::tag, 1), param(Role::bytes, 8),
                                               param(Role::comm, 0)})};
    const Node waitall{event(Op::Waitall, all(2), {param(Role::requests, 4), param(Role::completed_set, completed({0, 1, 2, 3}))})};
    late.body = {Node{Loop{alike(histogram_value({{2, 2}})), {irecv, isend}}}, waitall};
    CHECK(causal_replay_obstacle(late, 1, 0).find("leaves requests it made to be completed after it") != std::string::npos);
}

TEST_CASE("paired replay gives a receive the message sent before its completion, and no later one")
{
    // Rank 0: MPI_Irecv, then MPI_Wait; rank 1 sends to it between them in one trace, after them in
    // the other. In walk order a wait may only count on a send before it.
    auto trace = [](bool send_before_wait) {
        Trace t;
        t.header.ranks = 2;
        const Node irecv{event(Op::Irecv, RankList(0), {param(Role::peer, 1), param(Role::tag, 5),
                                                        param(Role::recv_bytes, 8), param(Role::comm, 0)})};
        const Node wait{event(Op::Wait, RankList(0), {param(Role::requests, 1), param(Role::completed_set, 1)})};
        const Node send{event(Op::Send, RankList(1), {param(Role::peer, 1), param(Role::tag, 5), param(Role::bytes, 8),
                                                      param(Role::comm, 0)})};
        t.body = send_before_wait ? Sequence{irecv, send, wait} : Sequence{irecv, wait, send};
        return t;
    };
    const auto before = schedule_of(trace(true), 1, 0, false);
    REQUIRE(before.size() == 2);
    CHECK(before[0].kind == CallKind::receive);  // posted where the rank posted it, looking ahead to the send
    CHECK(before[0].peer == 1);
    CHECK(before[1].kind == CallKind::complete);
    CHECK(before[1].requests == std::vector<RequestId>{before[0].request});  // and waited where it waited

    const auto after = schedule_of(trace(false), 1, 0, false);
    REQUIRE(after.size() == 2);
    CHECK(after[0].kind == CallKind::receive);  // posted where the walk meets the send
    CHECK(after[1].kind == CallKind::complete);  // at the end: the wait had nothing it could count on
    CHECK(after[1].event == nullptr);
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
    // Rank 3 computed 7 us before each send, the others 2 us.
    Event& timed = t.body[0].loop().body[0].event();
    timed.compute_by_rank = {{RankList::from_sorted({0, 1, 2, 4}), timed.compute}, {RankList(3), timed.compute}};
    timed.compute_by_rank[1].compute.mean = 7e-6;
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
        CHECK(computed == doctest::Approx(3 * (r == 3 ? 7e-6 : 2e-6)));
        for (const auto& c : schedule_of(t, 1, r, false)) CHECK(c.kind != CallKind::compute);
    }
}

namespace {

// Two ranks, rank 0 sending to rank 1 (relative peer 1 either way), as the tracer records it.
Event on_rank(Rank rank, Op op, std::vector<Param> params, uint64_t site)
{
    Event e = event(op, RankList(rank), std::move(params));
    e.signature = site;
    return e;
}

// The requests a completion completed (or a Request_free freed), and which of them were cancelled.
std::vector<Param> completes(std::vector<uint32_t> positions, std::vector<uint32_t> cancelled = {})
{
    std::vector<Param> params{param(Role::requests, static_cast<int64_t>(positions.size()))};
    for (int64_t v : encode_completed_set(positions)) params.push_back(param(Role::completed_set, v));
    if (!cancelled.empty()) {
        for (int64_t v : encode_completed_set(cancelled)) params.push_back(param(Role::cancelled_set, v));
    }
    return params;
}

std::vector<Param> p2p(Role bytes_role, int64_t tag, int64_t bytes = 8)
{
    return {param(Role::peer, 1), param(Role::tag, tag), param(bytes_role, bytes), param(Role::comm, 0)};
}

}  // namespace

TEST_CASE("a send whose cancel won is sent by nobody and received by nobody, in causal and paired replay")
{
    Trace t;
    t.header.ranks = 2;
    std::vector<Param> wait = completes({0}, {0});
    for (const Param& p : {param(Role::cancelled_peer, 1), param(Role::cancelled_tag, 9), param(Role::cancelled_comm, 0)}) {
        wait.push_back(p);
    }
    t.body = {Node{on_rank(0, Op::Isend, p2p(Role::bytes, 9), 1)}, Node{on_rank(0, Op::Wait, wait, 2)},
              Node{on_rank(0, Op::Send, p2p(Role::bytes, 3), 3)}, Node{on_rank(1, Op::Recv, p2p(Role::recv_bytes, 3), 4)}};
    CHECK(causal_replay_obstacle(t, 1, 0).empty());
    CHECK(causal_replay_obstacle(t, 1, 1).empty());
    for (const ReplayMode mode : {ReplayMode::causal, ReplayMode::paired}) {
        CAPTURE(static_cast<int>(mode));
        const auto sender = schedule_of(t, 1, 0, false, mode);
        CHECK(peers_of(sender, CallKind::send) == std::vector<std::pair<Rank, int64_t>>{{1, 3}});
        CHECK(std::none_of(sender.begin(), sender.end(), [](const auto& c) { return c.kind == CallKind::complete; }));
        const auto receiver = schedule_of(t, 1, 1, false, mode);
        CHECK(peers_of(receiver, CallKind::receive) == std::vector<std::pair<Rank, int64_t>>{{0, 3}});
    }
}

TEST_CASE("each request MPI_Start starts replays as the send or receive its init described, where it was started")
{
    Trace t;
    t.header.ranks = 2;
    std::vector<Param> synchronous_send = p2p(Role::bytes, 4, 64);
    synchronous_send.push_back(param(Role::synchronous, 1));
    t.body = {loop(3, {Node{on_rank(0, Op::Start, synchronous_send, 1)}, Node{on_rank(1, Op::Start, p2p(Role::recv_bytes, 4, 64), 2)},
                       Node{event(Op::Wait, all(2), completes({0}))}})};
    CHECK(causal_replay_obstacle(t, 1, 0).empty());
    CHECK(causal_replay_obstacle(t, 1, 1).empty());
    for (const Rank rank : {0, 1}) {
        const auto calls = causal_schedule_of(t, rank);
        REQUIRE(calls.size() == 6);
        for (size_t i = 0; i < calls.size(); i += 2) {
            CHECK(calls[i].kind == (rank == 0 ? CallKind::send : CallKind::receive));
            CHECK(calls[i].op == (rank == 0 ? Op::Issend : Op::Irecv));
            CHECK(calls[i].peer == 1 - rank);
            CHECK(calls[i].bytes == 64);
            CHECK(calls[i + 1].kind == CallKind::complete);
            CHECK(calls[i + 1].requests == std::vector<RequestId>{calls[i].request});
        }
    }
}

TEST_CASE("a request freed while active is freed where it was, and a later request is completed by its own wait")
{
    Trace t;
    t.header.ranks = 2;
    t.body = {Node{on_rank(0, Op::Isend, p2p(Role::bytes, 1), 1)}, Node{on_rank(0, Op::Request_free, completes({0}), 2)},
              Node{on_rank(0, Op::Isend, p2p(Role::bytes, 2), 3)}, Node{on_rank(0, Op::Wait, completes({0}), 4)},
              Node{on_rank(1, Op::Recv, p2p(Role::recv_bytes, 1), 5)}, Node{on_rank(1, Op::Recv, p2p(Role::recv_bytes, 2), 6)}};
    const auto calls = causal_schedule_of(t, 0);
    REQUIRE(calls.size() == 4);
    CHECK(calls[1].op == Op::Request_free);
    CHECK(calls[1].requests == std::vector<RequestId>{calls[0].request});
    CHECK(calls[3].op == Op::Wait);
    CHECK(calls[3].requests == std::vector<RequestId>{calls[2].request});
}

TEST_CASE("an intercommunicator whose two groups the merge kept apart still replays its peers as ranks of the "
          "remote group")
{
    // World split into {0} and {1, 2} (id 2 on every rank), joined by MPI_Intercomm_create (id 3) from two
    // call sites; on it rank 0 sends to remote rank 1 (world 2), ranks 1 and 2 to remote rank 0 (world 0).
    Trace t;
    t.header.ranks = 3;
    const auto per_rank = [](std::vector<PerRankValue> values) { return Value(std::move(values)); };
    const Event split = event(Op::Comm_split, all(3),
                              {param(Role::comm, 0), param(Role::new_comm, 2),
                               {Role::color, per_rank({{0, RankList(0)}, {1, RankList::from_sorted({1, 2})}})},
                               {Role::key, per_rank({{0, RankList::from_sorted({0, 1})}, {1, RankList(2)}})}});
    auto create = [&](RankList ranks, int64_t leader, int64_t remote_leader, std::vector<PerRankValue> keys, uint64_t site) {
        Event e = event(Op::Intercomm_create, std::move(ranks),
                        {param(Role::comm, 2), param(Role::new_comm, 3), param(Role::color, leader),
                         {Role::key, per_rank(std::move(keys))}, param(Role::remote_leader, remote_leader)});
        e.signature = site;
        return e;
    };
    const Event first = create(RankList(0), 0, 1, {{0, RankList(0)}}, 100);
    const Event second = create(RankList::from_sorted({1, 2}), 1, 0, {{0, RankList(1)}, {1, RankList(2)}}, 101);
    // Relative peers on an intercommunicator: (remote rank - own rank) mod remote size.
    const Event send = event(Op::Send, all(3),
                             {{Role::peer, per_rank({{1, RankList(0)}, {0, RankList::from_sorted({1, 2})}})},
                              param(Role::tag, 4), param(Role::bytes, 8), param(Role::comm, 3)});
    t.body = {Node{split}, Node{first}, Node{second}, Node{send}};

    const std::map<Rank, Rank> destination = {{0, 2}, {1, 0}, {2, 0}};
    const std::map<Rank, int32_t> destination_in_comm = {{0, 1}, {1, 0}, {2, 0}};
    for (Rank r = 0; r < 3; ++r) {
        CAPTURE(r);
        const auto calls = schedule_of(t, 1, r, false);
        std::vector<ScheduledCall> made;
        std::vector<ScheduledCall> sends;
        std::vector<ScheduledCall> receives;
        for (const auto& c : calls) {
            if (c.kind == CallKind::create_comm && c.op == Op::Intercomm_create) made.push_back(c);
            if (c.kind == CallKind::send) sends.push_back(c);
            if (c.kind == CallKind::receive) receives.push_back(c);
        }
        REQUIRE(made.size() == 1);
        CHECK(made[0].comm == 2);
        CHECK(made[0].remote_leader == (r == 0 ? 1 : 0));
        REQUIRE(sends.size() == 1);
        CHECK(sends[0].peer == destination.at(r));
        CHECK(sends[0].peer_in_comm == destination_in_comm.at(r));
        // Rank 0 hears from both ranks of the other group, rank 2 from rank 0 only, rank 1 from nobody.
        std::vector<std::pair<Rank, int32_t>> heard;
        for (const auto& c : receives) heard.emplace_back(c.peer, c.peer_in_comm);
        const std::map<Rank, std::vector<std::pair<Rank, int32_t>>> expected = {
            {0, {{1, 0}, {2, 1}}}, {1, {}}, {2, {{0, 0}}}};
        CHECK(heard == expected.at(r));
    }
}

TEST_CASE("a loop whose last iteration leaves out its collective replays E (X E)^n on every rank, causally")
{
    // Rank 0 sends to rank 1 three times, an MPI_Allreduce between sends: the steps before the first
    // collective joined the loop of steps at p = 0, whose last iteration leaves the collective out.
    Trace t;
    t.header.ranks = 2;
    const Event send = event(Op::Send, RankList(0), {param(Role::peer, 1), param(Role::tag, 3), param(Role::bytes, 64),
                                                     param(Role::comm, 0)});
    const Event recv = event(Op::Recv, RankList(1), {param(Role::peer, 1), param(Role::tag, 3),
                                                     param(Role::recv_bytes, 64), param(Role::comm, 0)});
    const Event allreduce = event(Op::Allreduce, all(2), {param(Role::bytes, 8), param(Role::comm, 0)});
    Loop steps{Value(int64_t{3}), {Node{send}, Node{recv}, Node{allreduce}}};
    steps.last_leaves_out = 1;
    t.body = {Node{steps}};
    const std::vector<CallKind> sender{CallKind::send, CallKind::collective, CallKind::send, CallKind::collective,
                                       CallKind::send};
    const std::vector<CallKind> receiver{CallKind::receive, CallKind::collective, CallKind::receive,
                                         CallKind::collective, CallKind::receive};
    for (Rank r = 0; r < 2; ++r) {
        CAPTURE(r);
        CHECK(causal_replay_obstacle(t, 1, r).empty());
        std::vector<CallKind> kinds;
        for (const auto& c : causal_schedule_of(t, r)) kinds.push_back(c.kind);
        CHECK(kinds == (r == 0 ? sender : receiver));
    }
}

TEST_CASE("one-sided calls drawn apart from their epochs are kept inside one; the program's own stay as made")
{
    // Rank 0 of two: locks rank 1 twice, puts to itself, unlocks three times, then gets from rank 1
    // (peers relative to the rank). Drawn values can give a rank such a sequence at p < 100; MPI
    // would refuse it (MPI_ERR_RMA_SYNC).
    Trace t;
    t.header.ranks = 2;
    t.header.precision = 0;
    const auto on_window = [](Op op, std::vector<Param> params) {
        params.push_back(param(Role::comm, 0));
        params.push_back(param(Role::window, 0));
        return Node{event(op, RankList(0), params)};
    };
    const Param to_one = param(Role::peer, 1);
    const Param shared = param(Role::lock_type, kLockShared);
    t.body = {Node{event(Op::Win_create, all(2), {param(Role::comm, 0), param(Role::window, 0),
                                                  {Role::bytes, histogram_value({{64, 1}, {128, 1}})}})},
              on_window(Op::Win_lock, {to_one, shared}),
              on_window(Op::Win_lock, {to_one, shared}),
              on_window(Op::Put, {param(Role::peer, 0), param(Role::bytes, 8), param(Role::target_bytes, 8)}),
              on_window(Op::Win_unlock, {to_one}),
              on_window(Op::Win_unlock, {to_one}),
              on_window(Op::Win_unlock, {to_one}),
              on_window(Op::Get, {to_one, param(Role::bytes, 8), param(Role::target_bytes, 8)}),
              Node{event(Op::Win_free, all(2), {param(Role::comm, 0), param(Role::window, 0)})}};
    using Made = std::tuple<Op, int32_t, bool>;  // operation, target in the window's communicator, own epoch
    auto one_sided = [](const Trace& trace) {
        std::vector<Made> made;
        for (const auto& c : schedule_of(trace, 1, 0, false)) {
            if (c.kind == CallKind::one_sided) made.emplace_back(c.op, c.peer_in_comm, c.own_epoch);
        }
        return made;
    };
    CHECK(one_sided(t) == std::vector<Made>{{Op::Win_lock, 1, false}, {Op::Win_flush, 1, false},
                                            {Op::Put, 1, false}, {Op::Win_flush, 1, false},
                                            {Op::Win_unlock, 1, false}, {Op::Win_unlock, 1, true},
                                            {Op::Get, 1, true}});
    // Lossless, the calls are the program's own, as it made them.
    t.header.precision = 100;
    CHECK(one_sided(t) == std::vector<Made>{{Op::Win_lock, 1, false}, {Op::Win_lock, 1, false},
                                            {Op::Put, 0, false}, {Op::Win_unlock, 1, false},
                                            {Op::Win_unlock, 1, false}, {Op::Win_unlock, 1, false},
                                            {Op::Get, 1, false}});
}
