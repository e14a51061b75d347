#include "replay/schedule.hpp"

#include "trace/walk.hpp"

#include <algorithm>
#include <array>
#include <numeric>
#include <optional>

namespace htrace::replay {
namespace {

// Buffered and ready sends need what replay cannot promise (an attached buffer, a receive already
// posted in real time): they go out as standard sends, moving the same bytes.
Op replayed_send(Op op)
{
    switch (op) {
    case Op::Send:
    case Op::Bsend:
    case Op::Rsend: return Op::Send;
    case Op::Ssend: return Op::Ssend;
    case Op::Issend: return Op::Issend;
    default: return Op::Isend;  // Isend, Ibsend, Irsend, and the send half of Sendrecv
    }
}

bool is_nonblocking_collective(Op op)
{
    return operation_kind(op) == OperationKind::collective && operation_name(op).substr(0, 5) == "MPI_I";
}

// Collectives whose per-rank sizes differ by design: every participant's own values make the call.
bool is_vector_collective(Op op)
{
    return is_one_of(op, {Op::Gatherv, Op::Igatherv, Op::Scatterv, Op::Iscatterv, Op::Allgatherv,
                          Op::Iallgatherv, Op::Alltoallv, Op::Ialltoallv, Op::Alltoallw, Op::Ialltoallw,
                          Op::Reduce_scatter, Op::Ireduce_scatter});
}

// Collectives whose send buffer may be MPI_IN_PLACE, which the trace shows as no send bytes but some
// receive bytes.
bool may_be_in_place(Op op, bool at_root)
{
    if (is_one_of(op, {Op::Gather, Op::Igather, Op::Gatherv, Op::Igatherv})) return at_root;
    return is_one_of(op, {Op::Allgather, Op::Iallgather, Op::Allgatherv, Op::Iallgatherv, Op::Alltoall,
                          Op::Ialltoall});
}

using Drawn = std::array<std::optional<int64_t>, kRoleCount>;

enum class Pending : uint8_t { receive, other };

class ScheduleGenerator {
public:
    ScheduleGenerator(const Trace& trace, uint64_t seed, Rank me, const CallSink& sink, bool compute)
        : trace_(trace), me_(me), sink_(sink), compute_(compute), draws_(seed)
    {
    }

    ScheduleSummary run()
    {
        TraceWalker walker(
            trace_,
            [this](const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms) {
                on_event(e, participants, comms);
            },
            draws_);
        walker.run();
        complete_pending(false);
        return summary_;
    }

private:
    // Every rank draws the same values in the same order: each histogram parameter of each
    // participant, whether or not this rank needs it. Other values are read when asked for.
    void draw_all(const Event& e, const std::vector<Rank>& participants)
    {
        event_ = &e;
        participants_ = &participants;
        const bool any = std::any_of(e.params.begin(), e.params.end(),
                                     [](const Param& p) { return p.value.is_histogram(); });
        drawn_.resize(any ? participants.size() : 0);
        for (size_t i = 0; i < drawn_.size(); ++i) {
            for (const auto& param : e.params) {
                if (param.value.is_histogram()) drawn_[i][static_cast<size_t>(param.role)] = draws_.draw(param.value.histogram());
            }
        }
    }

    std::optional<int64_t> value(size_t participant, Role role) const
    {
        const Value* v = event_->find(role);
        if (v == nullptr) return std::nullopt;
        if (v->is_histogram()) return drawn_[participant][static_cast<size_t>(role)];
        return v->value_for((*participants_)[participant]);
    }

    void on_event(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms)
    {
        draw_all(e, participants);
        const auto me = std::lower_bound(participants.begin(), participants.end(), me_);
        const bool taking_part = me != participants.end() && *me == me_;
        const size_t my_index = static_cast<size_t>(me - participants.begin());
        if (taking_part && compute_ && e.compute.count > 0 && e.compute.mean > 0) {
            ScheduledCall delay;
            delay.kind = CallKind::compute;
            delay.op = e.op;
            delay.seconds = e.compute.mean;
            sink_(delay);
        }
        switch (operation_kind(e.op)) {
        case OperationKind::send:
        case OperationKind::sendrecv:
            sends(e, participants, comms);
            if (taking_part && operation_kind(e.op) == OperationKind::sendrecv) complete_pending(false);
            break;
        case OperationKind::recv:
            if (taking_part && e.op == Op::Recv) complete_pending(true);
            break;
        case OperationKind::completion:
            if (taking_part && completed_something(e.op, my_index)) complete_pending(false);
            break;
        case OperationKind::collective:
            if (taking_part) collective(e, participants, comms, my_index);
            break;
        case OperationKind::comm_create:
            if (taking_part) create(e, comms, my_index);
            break;
        case OperationKind::comm_free:
            if (taking_part) release(e, comms, my_index);
            break;
        case OperationKind::opaque:
            if (taking_part) ++summary_.by_name_only;
            break;
        default:  // init, finalize, probes: nothing to issue
            break;
        }
    }

    bool completed_something(Op op, size_t my_index) const
    {
        if (!is_one_of(op, {Op::Test, Op::Testall, Op::Testany, Op::Testsome, Op::Waitsome})) return true;
        return value(my_index, Role::completed).value_or(1) > 0;
    }

    // Each participant's send, in participant order; its destination posts the receive at that point.
    void sends(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms)
    {
        if (!world_senders(e, participants)) {
            for (size_t i = 0; i < participants.size(); ++i) send_of(e, participants, i, comms);
            return;
        }
        for (size_t i : senders_) send_of(e, participants, i, comms);
    }

    // Without drawn values on the world communicator, the participants that matter to this rank
    // (itself, and those whose relative peer lands on it) follow from the peer values alone: the
    // walk's cost per event stays independent of the rank count. Fills senders_ in participant
    // order; false where that shortcut does not apply.
    bool world_senders(const Event& e, const std::vector<Rank>& participants)
    {
        const Value* comm = e.find(Role::comm);
        const Value* peer = e.find(Role::peer);
        if (!drawn_.empty() || comm == nullptr || peer == nullptr || !comm->is_exact() || comm->exact() != 0 ||
            peer->is_histogram()) {
            return false;
        }
        const auto world = static_cast<int64_t>(trace_.header.ranks);
        senders_.clear();
        auto consider = [&](int64_t relative) {
            if (relative < 0 || world <= 0) return;
            const auto sender = static_cast<Rank>(((me_ - relative) % world + world) % world);
            const auto at = std::lower_bound(participants.begin(), participants.end(), sender);
            if (at != participants.end() && *at == sender && peer->value_for(sender) == relative) {
                senders_.push_back(static_cast<size_t>(at - participants.begin()));
            }
        };
        if (peer->is_exact()) {
            consider(peer->exact());
        } else {
            for (const auto& entry : peer->per_rank()) consider(entry.value);
        }
        const auto me = std::lower_bound(participants.begin(), participants.end(), me_);
        if (me != participants.end() && *me == me_) senders_.push_back(static_cast<size_t>(me - participants.begin()));
        std::sort(senders_.begin(), senders_.end());
        senders_.erase(std::unique(senders_.begin(), senders_.end()), senders_.end());
        return true;
    }

    void send_of(const Event& e, const std::vector<Rank>& participants, size_t i, const CommunicatorTable& comms)
    {
        const Rank sender = participants[i];
        const auto comm = value(i, Role::comm);
        const auto peer = value(i, Role::peer);
        if (!comm || !peer) return;
        std::optional<Rank> destination;
        if (*peer == kProcNull) {
            destination = static_cast<Rank>(kProcNull);
        } else {
            destination = comms.world_peer(sender, *comm, *peer);
        }
        if (!destination) {
            if (sender == me_) not_replayed(e.op);
            return;
        }
        const int64_t tag = value(i, Role::tag).value_or(0);
        const int64_t bytes = std::max<int64_t>(0, value(i, Role::bytes).value_or(0));
        if (*destination == me_) {
            const auto my_comm = comms.local_id(me_, sender, *comm);
            const auto source = my_comm ? comms.rank_in(me_, *my_comm, sender) : std::nullopt;
            if (my_comm && source) {
                ScheduledCall receive;
                receive.kind = CallKind::post_receive;
                receive.op = Op::Irecv;
                receive.comm = *my_comm;
                receive.peer = sender;
                receive.peer_in_comm = *source;
                receive.tag = tag;
                receive.bytes = bytes;
                receive.request = next_request_++;
                pending_.emplace_back(receive.request, Pending::receive);
                sink_(receive);
            }
        }
        if (sender != me_) return;
        ScheduledCall send;
        send.kind = CallKind::send;
        send.op = replayed_send(e.op);
        send.comm = *comm;
        send.peer = *destination;
        send.peer_in_comm = *destination == kProcNull ? static_cast<int32_t>(kProcNull)
                                                      : comms.rank_in(me_, *comm, *destination).value_or(-1);
        send.tag = tag;
        send.bytes = bytes;
        if (send.op == Op::Isend || send.op == Op::Issend) {
            send.request = next_request_++;
            pending_.emplace_back(send.request, Pending::other);
        }
        sink_(send);
    }

    void collective(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms,
                    size_t my_index)
    {
        const auto comm = value(my_index, Role::comm);
        const auto* members = comm ? comms.members(me_, *comm) : nullptr;
        // A collective replays only where every member of its communicator takes part; anything else
        // would hang, and the merge never produces it for a communicator the trace knows.
        if (members == nullptr || is_neighbor_collective(e.op) || !all_take_part(*members, participants)) {
            not_replayed(e.op);
            return;
        }
        complete_pending(false);

        ScheduledCall call;
        call.kind = CallKind::collective;
        call.op = e.op;
        call.comm = *comm;
        if (const auto root = value(my_index, Role::root)) call.root = static_cast<int32_t>(*root);
        const bool at_root = call.root >= 0 && (*members)[static_cast<size_t>(call.root)] == me_;
        auto size = [&](size_t participant, Role role) {
            return std::max<int64_t>(0, value(participant, role).value_or(0));
        };
        call.bytes = size(my_index, Role::bytes);
        call.recv_bytes = size(my_index, Role::recv_bytes);
        if (is_vector_collective(e.op)) {
            // Per-member sizes: every member derives all counts from everyone's values.
            vector_counts(e.op, participants, *members, call);
        } else if (has_histogram(e, Role::bytes) || has_histogram(e, Role::recv_bytes)) {
            // Drawn sizes differ between members, and MPI needs them to agree: one block for all,
            // the first participant's (its send side, or its receive side where it sent nothing).
            const int64_t block = std::max(size(0, Role::bytes), size(0, Role::recv_bytes));
            call.bytes = block;
            call.recv_bytes = block;
        } else {
            call.in_place = may_be_in_place(e.op, at_root) && call.bytes == 0 && call.recv_bytes > 0;
        }
        if (is_nonblocking_collective(e.op)) {
            call.request = next_request_++;
            pending_.emplace_back(call.request, Pending::other);
        }
        sink_(call);
    }

    static bool has_histogram(const Event& e, Role role)
    {
        const Value* v = e.find(role);
        return v != nullptr && v->is_histogram();
    }

    bool all_take_part(const std::vector<Rank>& members, const std::vector<Rank>& participants) const
    {
        if (members.size() > participants.size()) return false;
        return std::all_of(members.begin(), members.end(), [&](Rank m) {
            return std::binary_search(participants.begin(), participants.end(), m);
        });
    }

    // Per-member sizes of v-collectives, indexed by rank in the communicator, from every member's own
    // values (drawn or recorded), so that each side's counts agree with the other's.
    void vector_counts(Op op, const std::vector<Rank>& participants, const std::vector<Rank>& members,
                       ScheduledCall& call)
    {
        const size_t n = members.size();
        auto of_member = [&](size_t member, Role role) -> int64_t {
            const auto at = std::lower_bound(participants.begin(), participants.end(), members[member]);
            return std::max<int64_t>(0, value(static_cast<size_t>(at - participants.begin()), role).value_or(0));
        };
        const size_t my_rank = static_cast<size_t>(
            std::find(members.begin(), members.end(), me_) - members.begin());
        if (is_one_of(op, {Op::Gatherv, Op::Igatherv, Op::Allgatherv, Op::Iallgatherv})) {
            // What each member contributes. One that gave MPI_IN_PLACE (the root of a Gatherv, any
            // member of an Allgatherv; it shows as no bytes sent, some received) contributes its
            // share of what the receiver got beyond the others' contributions.
            const size_t receiver = call.root >= 0 ? static_cast<size_t>(call.root) : 0;
            auto in_place = [&](size_t m) {
                return may_be_in_place(op, call.root < 0 || m == receiver) && of_member(m, Role::bytes) == 0 &&
                       of_member(m, Role::recv_bytes) > 0;
            };
            int64_t given = 0;
            int64_t sharing = 0;
            for (size_t m = 0; m < n; ++m) {
                given += of_member(m, Role::bytes);
                sharing += in_place(m) ? 1 : 0;
            }
            const int64_t rest = std::max<int64_t>(0, of_member(receiver, Role::recv_bytes) - given);
            call.recv_counts.resize(n);
            for (size_t m = 0; m < n; ++m) {
                call.recv_counts[m] = in_place(m) ? rest / sharing : of_member(m, Role::bytes);
            }
            call.in_place = in_place(my_rank);
            return;
        }
        if (is_one_of(op, {Op::Scatterv, Op::Iscatterv})) {
            call.send_counts.resize(n);
            for (size_t m = 0; m < n; ++m) call.send_counts[m] = of_member(m, Role::recv_bytes);
            return;
        }
        auto even_share = [n](int64_t total, size_t to) {
            const auto parts = static_cast<int64_t>(n);
            return total / parts + (static_cast<int64_t>(to) < total % parts ? 1 : 0);
        };
        if (is_one_of(op, {Op::Reduce_scatter, Op::Ireduce_scatter})) {
            // The trace keeps the sum of the receive counts, the same on every member unless drawn:
            // the first member's then stands for all.
            call.recv_counts.resize(n);
            for (size_t m = 0; m < n; ++m) call.recv_counts[m] = even_share(of_member(0, Role::recv_bytes), m);
            return;
        }
        // Alltoallv/w: the trace keeps each member's send and receive totals, not who sent whom
        // what. Any matrix with those row and column sums moves the same bytes: the north-west
        // corner rule builds one from the totals alone, the same on every member. Drawn totals that
        // do not balance go out in even shares instead.
        std::vector<int64_t> sent(n);
        std::vector<int64_t> received(n);
        for (size_t m = 0; m < n; ++m) {
            sent[m] = of_member(m, Role::bytes);
            received[m] = of_member(m, Role::recv_bytes);
        }
        call.send_counts.assign(n, 0);
        call.recv_counts.assign(n, 0);
        call.in_place = false;
        if (std::accumulate(sent.begin(), sent.end(), int64_t{0}) !=
            std::accumulate(received.begin(), received.end(), int64_t{0})) {
            for (size_t m = 0; m < n; ++m) {
                call.send_counts[m] = even_share(sent[my_rank], m);
                call.recv_counts[m] = even_share(sent[m], my_rank);
            }
            return;
        }
        size_t from = 0;
        size_t to = 0;
        while (from < n && to < n) {
            const int64_t moved = std::min(sent[from], received[to]);
            if (from == my_rank) call.send_counts[to] = moved;
            if (to == my_rank) call.recv_counts[from] = moved;
            sent[from] -= moved;
            received[to] -= moved;
            if (sent[from] == 0) {
                ++from;
            } else {
                ++to;
            }
        }
    }

    void create(const Event& e, const CommunicatorTable& comms, size_t my_index)
    {
        const auto parent = value(my_index, Role::comm);
        const auto made = value(my_index, Role::new_comm);
        complete_pending(false);
        if (!made || *made == kNoComm) return;  // this rank got MPI_COMM_NULL
        const auto* members = comms.members(me_, *made);
        if (members == nullptr) {
            not_replayed(e.op);
            return;
        }
        ScheduledCall call;
        call.kind = CallKind::create_comm;
        call.op = e.op;
        call.comm = parent.value_or(kNoComm);
        call.new_comm = *made;
        call.members = *members;
        sink_(call);
    }

    void release(const Event& e, const CommunicatorTable& comms, size_t my_index)
    {
        const auto comm = value(my_index, Role::comm);
        if (!comm || comms.members(me_, *comm) == nullptr || *comm <= 1) return;
        (void)e;
        complete_pending(false);
        ScheduledCall call;
        call.kind = CallKind::free_comm;
        call.op = Op::Comm_free;
        call.comm = *comm;
        sink_(call);
    }

    void complete_pending(bool receives_only)
    {
        ScheduledCall call;
        call.kind = CallKind::complete;
        call.op = Op::Waitall;
        auto keep = std::stable_partition(pending_.begin(), pending_.end(), [&](const auto& entry) {
            return receives_only && entry.second != Pending::receive;
        });
        for (auto it = keep; it != pending_.end(); ++it) call.requests.push_back(it->first);
        pending_.erase(keep, pending_.end());
        if (!call.requests.empty()) sink_(call);
    }

    void not_replayed(Op op) { ++summary_.not_replayed[std::string(operation_name(op))]; }

    const Trace& trace_;
    Rank me_;
    const CallSink& sink_;
    bool compute_;
    HistogramSampler draws_;
    const Event* event_ = nullptr;
    const std::vector<Rank>* participants_ = nullptr;
    std::vector<Drawn> drawn_;  // per participant, the histogram values drawn for the current event
    std::vector<std::pair<RequestId, Pending>> pending_;
    std::vector<size_t> senders_;
    RequestId next_request_ = 1;
    ScheduleSummary summary_;
};

}  // namespace

ScheduleSummary generate_schedule(const Trace& trace, uint64_t seed, Rank rank, const CallSink& sink, bool compute)
{
    return ScheduleGenerator(trace, seed, rank, sink, compute).run();
}

}  // namespace htrace::replay
