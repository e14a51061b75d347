// The walk's side of one-sided communication (rank_stream.hpp): windows are made, freed and fenced
// by every member of their communicator, like collectives; everything else a rank issues alone, on a
// window it knows by the communicator it had when the window was made.

#include "replay/rank_stream.hpp"

#include <algorithm>

namespace htrace::replay {

void RankStream::window_collective(const Event& e, const std::vector<Rank>& participants,
                                   const CommunicatorTable& comms, size_t me)
{
    const auto window = value(me, Role::window);
    const bool creation = e.op != Op::Win_fence && e.op != Op::Win_free;
    const auto found = window ? windows_.find(*window) : windows_.end();
    CommView view;
    if (creation) {
        const auto comm = value(me, Role::comm);
        if (comm) {
            view.members = comms.shared_members(me_, *comm);
            view.my_rank = comms.rank_in(me_, *comm, me_).value_or(-1);
        }
    } else if (found != windows_.end()) {
        view = found->second.comm;
    }
    // Like any collective, only where every member of the window's communicator takes part.
    const bool all_take_part = window && *window >= 0 && view.members && view.my_rank >= 0 &&
                               std::all_of(view.members->begin(), view.members->end(), [&](Rank m) {
                                   return std::binary_search(participants.begin(), participants.end(), m);
                               });
    if (!all_take_part) {
        not_replayed(e, false);
        return;
    }
    Item& item = add(ItemKind::collective, e);
    ScheduledCall& call = item.call;
    call.kind = CallKind::collective;
    call.comm = value(me, Role::comm).value_or(kNoComm);
    call.window = *window;
    call.bytes = std::max<int64_t>(0, value(me, Role::bytes).value_or(0));
    call.assertion = value(me, Role::assertion).value_or(0);
    // A dynamic window gets memory for the largest access the trace makes. Where a window's size, or
    // the size of accesses, was drawn, the two were drawn apart: the window is made as large as the
    // largest its size histogram holds and as the largest access, so every drawn access falls inside.
    if (e.op == Op::Win_create_dynamic) call.recv_bytes = largest_target_;
    const Value* size = e.find(Role::bytes);
    if (creation && size != nullptr && (size->is_histogram() || target_sizes_drawn_)) {
        const int64_t most = size->is_histogram() ? size->histogram().max().value : call.bytes;
        call.bytes = std::max({call.bytes, most, largest_target_});
    }
    if (creation) windows_[*window] = Window{view, {}, false, {}, false};
    if (e.op == Op::Win_fence) found->second.fenced = true;
    if (e.op == Op::Win_free) windows_.erase(found);
}

void RankStream::one_sided(const Event& e, size_t me)
{
    const auto window = value(me, Role::window);
    const auto found = window ? windows_.find(*window) : windows_.end();
    if (found == windows_.end()) {
        not_replayed(e, creates_request(e.op));
        return;
    }
    const CommView& view = found->second.comm;
    Item& item = add(ItemKind::one_sided, e);
    item.creates_request = creates_request(e.op);
    ScheduledCall& call = item.call;
    call.kind = CallKind::one_sided;
    call.window = *window;
    for (size_t k = 0; k < e.params.size(); ++k) {
        const auto v = value(me, k);
        if (!v) continue;
        switch (e.params[k].role) {
        case Role::peer: {
            // A target, or one rank of a post or start group: ranks of the window's communicator.
            // MPI_PROC_NULL stays symbolic: a call aimed at it moves nothing.
            if (*v == kProcNull) {
                call.peer = static_cast<Rank>(kProcNull);
                call.peer_in_comm = static_cast<int32_t>(kProcNull);
                break;
            }
            const auto world = view.world_peer(*v);
            const auto& members = *view.members;
            const auto at = world ? std::find(members.begin(), members.end(), *world) : members.end();
            const int32_t rank = at == members.end() ? -1 : static_cast<int32_t>(at - members.begin());
            if (is_one_of(e.op, {Op::Win_post, Op::Win_start})) {
                call.group.push_back(rank);
            } else {
                call.peer = world.value_or(-1);
                call.peer_in_comm = rank;
            }
            break;
        }
        case Role::bytes: call.bytes = std::max<int64_t>(0, *v); break;
        case Role::target_bytes: call.target_bytes = std::max<int64_t>(0, *v); break;
        case Role::recv_bytes: call.recv_bytes = std::max<int64_t>(0, *v); break;
        case Role::assertion: call.assertion = *v; break;
        case Role::lock_type: call.lock_type = *v; break;
        default: break;
        }
    }
    keep_target_in_epoch(e, found->second, call);
    // MPI needs an access's origin, target and result to describe as many bytes; where a size was
    // drawn, the three were drawn apart, and the target's (the window holds it) stands for all.
    const bool sizes_drawn = drawn(Role::bytes) || drawn(Role::target_bytes) || drawn(Role::recv_bytes);
    if (sizes_drawn && e.find(Role::target_bytes) != nullptr && !is_one_of(e.op, {Op::Fetch_and_op, Op::Compare_and_swap})) {
        call.bytes = call.target_bytes;
        if (e.find(Role::recv_bytes) != nullptr) call.recv_bytes = call.target_bytes;
    }
}

// Passive and general active target epochs open some targets only: Win_lock one, Win_start a group.
// Recorded targets and epochs are the program's own, and MPI accepts them as they come. Where values
// or loop counts were drawn (p < 100), a rank's locks, accesses and unlocks were drawn apart, and
// MPI would refuse what they make (MPI_ERR_RMA_SYNC), so replay keeps every call inside an epoch:
// - an access or unlock whose target the epoch did not open goes to the target it opened last;
// - a lock of a target the rank holds already is a flush of it, and one unlock of the two a flush;
// - an access, flush or unlock outside any epoch (no lock, no start, no fence yet), and an
//   unlock_all without lock_all, is issued in an epoch of its own (ScheduledCall::own_epoch).
void RankStream::keep_target_in_epoch(const Event& e, Window& window, ScheduledCall& call)
{
    if (as_run_) return;
    auto& locked = window.locked;
    const auto holds = [&](int32_t target) { return std::count(locked.begin(), locked.end(), target); };
    switch (e.op) {
    case Op::Win_lock:
        if (window.locked_all || holds(call.peer_in_comm) > 0) call.op = Op::Win_flush;
        if (!window.locked_all) locked.push_back(call.peer_in_comm);
        return;
    case Op::Win_lock_all:
        if (window.locked_all) call.op = Op::Win_flush_all;
        window.locked_all = true;
        return;
    case Op::Win_unlock_all:
        call.own_epoch = !window.locked_all;
        window.locked_all = false;
        return;
    case Op::Win_start: window.started = call.group; return;
    case Op::Win_complete: window.started.clear(); return;
    case Op::Win_post:
    case Op::Win_wait: return;
    case Op::Win_flush_all:
    case Op::Win_flush_local_all: call.own_epoch = !window.locked_all && locked.empty(); return;
    default: break;
    }
    if (call.peer_in_comm == static_cast<int32_t>(kProcNull) || call.peer_in_comm < 0) return;
    const std::vector<int32_t>* opened = !locked.empty() ? &locked : !window.started.empty() ? &window.started : nullptr;
    if (window.locked_all) opened = nullptr;
    if (opened != nullptr && opened->back() >= 0 &&
        std::find(opened->begin(), opened->end(), call.peer_in_comm) == opened->end()) {
        call.peer_in_comm = opened->back();
        call.peer = (*window.comm.members)[static_cast<size_t>(call.peer_in_comm)];
    }
    const bool in_epoch = window.locked_all || opened != nullptr || (window.fenced && e.op != Op::Win_unlock &&
                                                                       e.op != Op::Win_flush && e.op != Op::Win_flush_local);
    if (!in_epoch) {
        call.own_epoch = true;
        return;
    }
    if (e.op == Op::Win_unlock && !window.locked_all) {
        const auto at = std::find(locked.begin(), locked.end(), call.peer_in_comm);
        if (at == locked.end()) {
            call.own_epoch = true;
            return;
        }
        locked.erase(at);
        if (holds(call.peer_in_comm) > 0) call.op = Op::Win_flush;
    } else if (e.op == Op::Win_unlock) {
        call.op = Op::Win_flush;
    }
}

}  // namespace htrace::replay
