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
        view = found->second;
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
    // A dynamic window gets memory for the largest access the trace makes.
    if (e.op == Op::Win_create_dynamic) call.recv_bytes = largest_target_;
    if (creation) windows_[*window] = view;
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
    const CommView& view = found->second;
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
}

}  // namespace htrace::replay
