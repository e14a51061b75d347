// Timelines: what one rank's keeps of each scheduled call, the communicators the calls name, and its
// bytes between ranks, refused when they are damaged; and the wait states found in the timelines of
// all ranks, on timelines made by hand whose waits are known.
#include "timeline/rank_timeline.hpp"
#include "timeline/wait_states.hpp"

#include <doctest/doctest.h>

#include <cstring>

using namespace htrace;
using namespace htrace::timeline;
using replay::CallKind;
using replay::ScheduledCall;

namespace {

ScheduledCall call_of(CallKind kind, Op op, const Event* event = nullptr)
{
    ScheduledCall call;
    call.kind = kind;
    call.op = op;
    call.event = event;
    return call;
}

}  // namespace

TEST_CASE("a timeline keeps calls with their world peers and communicators, not computation")
{
    RankTimeline timeline(1, 4);
    timeline.add(call_of(CallKind::compute, Op::Send), 0, 1);
    ScheduledCall send = call_of(CallKind::send, Op::Send);
    send.peer = 3;
    send.peer_in_comm = 1;
    send.tag = 7;
    send.bytes = 64;
    timeline.add(send, 1.0, 1.5);
    ScheduledCall split = call_of(CallKind::create_comm, Op::Comm_split);
    split.new_comm = 5;
    split.members = {1, 3};
    timeline.add(split, 2.0, 2.5);
    ScheduledCall reduce = call_of(CallKind::collective, Op::Allreduce);
    reduce.comm = 5;
    reduce.bytes = 8;
    timeline.add(reduce, 3.0, 3.25);

    REQUIRE(timeline.calls().size() == 3);
    const TimedCall& sent = timeline.calls()[0];
    CHECK(sent.op == Op::Send);
    CHECK(sent.peer == 3);  // the world rank, not the rank in the communicator
    CHECK(sent.tag == 7);
    CHECK(sent.bytes == 64);
    CHECK(sent.start == 1.0);
    CHECK(sent.end == 1.5);
    const auto& communicators = timeline.communicators();
    CHECK(communicators[sent.comm] == std::vector<Rank>{0, 1, 2, 3});
    CHECK(communicators[timeline.calls()[2].comm] == std::vector<Rank>{1, 3});
    CHECK(timeline.calls()[2].peer == -1);
}

TEST_CASE("a call shows the program's operation where replay issued another of its kind")
{
    Event ready;
    ready.op = Op::Rsend;
    ready.signature = 0xabc;
    Event start;
    start.op = Op::Start;
    RankTimeline timeline(0, 2);
    ScheduledCall send = call_of(CallKind::send, Op::Send, &ready);
    send.peer = 1;
    timeline.add(send, 0, 1);
    send.op = Op::Isend;
    send.event = &start;  // a persistent send started: the timeline shows the send that went
    timeline.add(send, 1, 2);
    REQUIRE(timeline.calls().size() == 2);
    CHECK(timeline.calls()[0].op == Op::Rsend);
    CHECK(timeline.calls()[0].signature == 0xabc);
    CHECK(timeline.calls()[1].op == Op::Isend);
}

TEST_CASE("calls past the most a timeline keeps are counted as dropped")
{
    RankTimeline timeline(0, 2, 2);
    for (int i = 0; i < 5; ++i) timeline.add(call_of(CallKind::collective, Op::Barrier), i, i + 0.5);
    CHECK(timeline.calls().size() == 2);
    CHECK(timeline.dropped() == 3);
}

TEST_CASE("a timeline's bytes come back as the same timeline, and damaged ones are refused")
{
    RankTimeline timeline(2, 3, 3);
    ScheduledCall split = call_of(CallKind::create_comm, Op::Comm_split);
    split.new_comm = 9;
    split.members = {2, 0};
    timeline.add(split, 0.5, 0.75);
    ScheduledCall bcast = call_of(CallKind::collective, Op::Bcast);
    bcast.comm = 9;
    bcast.root = 1;
    bcast.bytes = 100;
    for (int i = 0; i < 4; ++i) timeline.add(bcast, 1 + i, 1.5 + i);
    const std::string bytes = timeline.serialize();

    RankTimeline back(0, 1);
    REQUIRE(RankTimeline::deserialize(bytes, back).empty());
    CHECK(back.rank() == 2);
    CHECK(back.calls() == timeline.calls());
    CHECK(back.communicators() == timeline.communicators());
    CHECK(back.dropped() == 2);

    for (size_t cut : {size_t{0}, size_t{7}, bytes.size() / 2, bytes.size() - 1}) {
        RankTimeline damaged(0, 1);
        CHECK_FALSE(RankTimeline::deserialize(bytes.substr(0, cut), damaged).empty());
    }
    RankTimeline longer(0, 1);
    CHECK_FALSE(RankTimeline::deserialize(bytes + "x", longer).empty());

    // A call whose communicator index is beyond the timeline's communicators.
    std::string unknown = bytes;
    const size_t last_call = unknown.size() - sizeof(TimedCall);
    TimedCall call;
    std::memcpy(&call, unknown.data() + last_call, sizeof call);
    call.comm = 99;
    std::memcpy(unknown.data() + last_call, &call, sizeof call);
    RankTimeline stray(0, 1);
    CHECK_FALSE(RankTimeline::deserialize(unknown, stray).empty());
}

namespace {

// A rank's timeline of the given calls (kind, op, peer or root, start, end), all on the world.
struct Made {
    CallKind kind;
    Op op;
    Rank peer;
    double start, end;
};

RankTimeline timeline_of(Rank rank, int32_t size, std::initializer_list<Made> calls)
{
    RankTimeline timeline(rank, size);
    for (const Made& made : calls) {
        ScheduledCall call = call_of(made.kind, made.op);
        if (made.kind == CallKind::collective) {
            call.root = made.peer;
        } else {
            call.peer = made.peer;
        }
        timeline.add(call, made.start, made.end);
    }
    return timeline;
}

double waited(const WaitStates& waits, Rank rank, WaitKind kind)
{
    return waits.per_rank().at(static_cast<size_t>(rank))[static_cast<size_t>(kind)];
}

}  // namespace

TEST_CASE("wait states: a late sender, a late receiver, and waits at collectives by their kind")
{
    WaitStates waits;
    // Rank 0 sends at 5 s; rank 1 receives from 2 s: 3 s late sender. Rank 1's Ssend at 10 s waits
    // for rank 0's receive at 12 s: 2 s late receiver. A barrier entered at 20 and 23 s: rank 0 waits
    // 3 s. A broadcast from rank 1, entered by the root at 31 s: rank 0, there at 30 s, waits 1 s.
    // A reduce to rank 0 entered at 40 s, rank 1 arriving at 44 s: the root waits 4 s, rank 1 none.
    waits.add(timeline_of(0, 2, {{CallKind::send, Op::Send, 1, 5, 5.5},
                                 {CallKind::receive, Op::Recv, 1, 12, 12.5},
                                 {CallKind::collective, Op::Barrier, -1, 20, 23.1},
                                 {CallKind::collective, Op::Bcast, 1, 30, 31.2},
                                 {CallKind::collective, Op::Reduce, 0, 40, 44.5}}));
    waits.add(timeline_of(1, 2, {{CallKind::receive, Op::Recv, 0, 2, 5.5},
                                 {CallKind::send, Op::Ssend, 0, 10, 12.5},
                                 {CallKind::collective, Op::Barrier, -1, 23, 23.1},
                                 {CallKind::collective, Op::Bcast, 1, 31, 31.2},
                                 {CallKind::collective, Op::Reduce, 0, 44, 44.5}}));
    REQUIRE(waits.finish().empty());
    CHECK(waited(waits, 1, WaitKind::late_sender) == doctest::Approx(3));
    CHECK(waited(waits, 0, WaitKind::late_sender) == 0);  // its receive came after the Ssend had started
    CHECK(waited(waits, 1, WaitKind::late_receiver) == doctest::Approx(2));
    CHECK(waited(waits, 0, WaitKind::wait_at_collective) == doctest::Approx(3 + 1 + 4));
    CHECK(waited(waits, 1, WaitKind::wait_at_collective) == 0);
    REQUIRE(!waits.sites().empty());
    CHECK(waits.sites()[0].op == Op::Reduce);  // the longest wait first
    CHECK(waits.sites()[0].most_rank == 0);
}

TEST_CASE("a wait is at most the waiting call's own time")
{
    WaitStates waits;
    // The receive returned after 1 s although the send began 3 s after it (clocks of two hosts):
    // it cannot have waited longer than it lasted.
    waits.add(timeline_of(0, 2, {{CallKind::send, Op::Send, 1, 5, 5.5}}));
    waits.add(timeline_of(1, 2, {{CallKind::receive, Op::Recv, 0, 2, 3}}));
    REQUIRE(waits.finish().empty());
    CHECK(waited(waits, 1, WaitKind::late_sender) == doctest::Approx(1));
}

TEST_CASE("wait states: a communicator's creation waits like a collective, a non-blocking collective at its post does not")
{
    WaitStates waits;
    // MPI_Intercomm_merge entered at 1 s and 4 s: rank 0 waits 3 s. MPI_Ibarrier posted at 10 s and
    // 15 s returns at once; its wait, if any, is in the completion call.
    waits.add(timeline_of(0, 2, {{CallKind::create_comm, Op::Intercomm_merge, -1, 1, 4.1},
                                 {CallKind::collective, Op::Ibarrier, -1, 10, 10.1}}));
    waits.add(timeline_of(1, 2, {{CallKind::create_comm, Op::Intercomm_merge, -1, 4, 4.1},
                                 {CallKind::collective, Op::Ibarrier, -1, 15, 15.1}}));
    REQUIRE(waits.finish().empty());
    CHECK(waited(waits, 0, WaitKind::wait_at_collective) == doctest::Approx(3));
    CHECK(waited(waits, 1, WaitKind::wait_at_collective) == 0);
}
