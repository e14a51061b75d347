#include "replay/one_sided_executor.hpp"

#include <algorithm>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>

namespace htrace::replay {
namespace {

int as_count(int64_t bytes)
{
    if (bytes > INT_MAX) throw std::runtime_error("a one-sided access of " + std::to_string(bytes) + " bytes exceeds MPI's int count");
    return static_cast<int>(std::max<int64_t>(0, bytes));
}

// An integer type of the recorded element size, for the atomics.
MPI_Datatype element_type(int64_t bytes)
{
    switch (bytes) {
    case 1: return MPI_INT8_T;
    case 2: return MPI_INT16_T;
    case 4: return MPI_INT32_T;
    default: return MPI_INT64_T;
    }
}

}  // namespace

Windows::~Windows()
{
    for (auto& [id, w] : windows_) {
        if (w.win != MPI_WIN_NULL) MPI_Win_free(&w.win);
    }
}

Windows::Window& Windows::find(int64_t id)
{
    auto found = windows_.find(id);
    if (found == windows_.end()) throw std::runtime_error("schedule uses unknown window " + std::to_string(id));
    return found->second;
}

void Windows::collective(const ScheduledCall& call, MPI_Comm comm)
{
    if (call.op == Op::Win_fence) {
        MPI_Win_fence(static_cast<int>(call.assertion), find(call.window).win);
        return;
    }
    if (call.op == Op::Win_free) {
        Window& w = find(call.window);
        if (!w.bases.empty()) PMPI_Win_detach(w.win, w.memory.get());
        for (const auto& memory : w.attached) MPI_Win_detach(w.win, memory.get());
        MPI_Win_free(&w.win);
        windows_.erase(call.window);
        return;
    }
    Window w;
    const MPI_Aint size = static_cast<MPI_Aint>(call.bytes);
    void* base = nullptr;
    switch (call.op) {
    case Op::Win_create:
        w.memory = std::make_unique<char[]>(static_cast<size_t>(std::max<int64_t>(call.bytes, 1)));
        MPI_Win_create(w.memory.get(), size, 1, MPI_INFO_NULL, comm, &w.win);
        break;
    case Op::Win_allocate: MPI_Win_allocate(size, 1, MPI_INFO_NULL, comm, &base, &w.win); break;
    case Op::Win_allocate_shared: MPI_Win_allocate_shared(size, 1, MPI_INFO_NULL, comm, &base, &w.win); break;
    case Op::Win_create_dynamic: {
        MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &w.win);
        // Memory for the largest access, and every rank's address of it: the program's own
        // attachments are not in the trace.
        const auto attached = static_cast<size_t>(std::max<int64_t>(call.recv_bytes, 1));
        w.memory = std::make_unique<char[]>(attached);
        PMPI_Win_attach(w.win, w.memory.get(), static_cast<MPI_Aint>(attached));
        int n = 1;
        PMPI_Comm_size(comm, &n);
        MPI_Aint mine = 0;
        PMPI_Get_address(w.memory.get(), &mine);
        w.bases.assign(static_cast<size_t>(n), 0);
        PMPI_Allgather(&mine, 1, MPI_AINT, w.bases.data(), 1, MPI_AINT, comm);
        break;
    }
    default: throw std::runtime_error("no replay for " + std::string(operation_name(call.op)));
    }
    auto [slot, inserted] = windows_.try_emplace(call.window);
    if (!inserted && slot->second.win != MPI_WIN_NULL) MPI_Win_free(&slot->second.win);
    slot->second = std::move(w);
}

namespace {

// Where and how much an access moves, in MPI's ints.
struct Access {
    int target;
    MPI_Aint at;
    int n;
    int at_target;
    int results;
};

// The accesses: puts, gets and accumulations; false for any other call.
bool issue_access(const ScheduledCall& call, const Access& a, MPI_Win win, char* origin, char* result,
                  MPI_Request* request)
{
    const auto& [target, at, n, at_target, results] = a;
    // Accumulations combine bytes bitwise; a Get_accumulate without origin data only reads.
    const MPI_Op combine = n == 0 ? MPI_NO_OP : MPI_BOR;
    switch (call.op) {
    case Op::Put: MPI_Put(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, win); break;
    case Op::Get: MPI_Get(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, win); break;
    case Op::Accumulate: MPI_Accumulate(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, MPI_BOR, win); break;
    case Op::Get_accumulate:
        MPI_Get_accumulate(origin, n, MPI_BYTE, result, results, MPI_BYTE, target, at, at_target, MPI_BYTE, combine,
                           win);
        break;
    case Op::Fetch_and_op:
        MPI_Fetch_and_op(origin, result, element_type(call.bytes), target, at, MPI_BOR, win);
        break;
    case Op::Compare_and_swap:
        MPI_Compare_and_swap(origin, origin + 8, result, element_type(call.bytes), target, at, win);
        break;
    case Op::Rput: MPI_Rput(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, win, request); break;
    case Op::Rget: MPI_Rget(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, win, request); break;
    case Op::Raccumulate:
        MPI_Raccumulate(origin, n, MPI_BYTE, target, at, at_target, MPI_BYTE, MPI_BOR, win, request);
        break;
    case Op::Rget_accumulate:
        MPI_Rget_accumulate(origin, n, MPI_BYTE, result, results, MPI_BYTE, target, at, at_target, MPI_BYTE, combine,
                            win, request);
        break;
    default: return false;
    }
    return true;
}

}  // namespace

void Windows::issue(const ScheduledCall& call, char* origin, char* result, MPI_Request* request)
{
    Window& w = find(call.window);
    const int target = call.peer_in_comm == kProcNull ? MPI_PROC_NULL : call.peer_in_comm;
    const MPI_Aint at = w.bases.empty() || target < 0 ? 0 : w.bases[static_cast<size_t>(target)];
    const int n = as_count(call.bytes);
    const int at_target = as_count(call.target_bytes);
    const int results = as_count(call.recv_bytes);
    const bool all_targets = is_one_of(call.op, {Op::Win_unlock_all, Op::Win_flush_all, Op::Win_flush_local_all});
    if (call.own_epoch && all_targets) MPI_Win_lock_all(0, w.win);
    if (call.own_epoch && !all_targets) MPI_Win_lock(MPI_LOCK_SHARED, target, 0, w.win);
    if (!issue_access(call, Access{target, at, n, at_target, results}, w.win, origin, result, request) &&
        !issue_window_call(call, w, target)) {
        throw std::runtime_error("no replay for " + std::string(operation_name(call.op)));
    }
    // The call itself closes its own epoch where it is an unlock.
    if (call.own_epoch && call.op != Op::Win_unlock && call.op != Op::Win_unlock_all) {
        if (all_targets) {
            MPI_Win_unlock_all(w.win);
        } else {
            MPI_Win_unlock(target, w.win);
        }
    }
}

// Calls on the window itself: locks, flushes, epochs and attachments; false for any other call.
bool Windows::issue_window_call(const ScheduledCall& call, Window& w, int target)
{
    switch (call.op) {
    case Op::Win_lock:
        MPI_Win_lock(call.lock_type == kLockExclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, target,
                     static_cast<int>(call.assertion), w.win);
        break;
    case Op::Win_unlock: MPI_Win_unlock(target, w.win); break;
    case Op::Win_lock_all: MPI_Win_lock_all(static_cast<int>(call.assertion), w.win); break;
    case Op::Win_unlock_all: MPI_Win_unlock_all(w.win); break;
    case Op::Win_flush: MPI_Win_flush(target, w.win); break;
    case Op::Win_flush_local: MPI_Win_flush_local(target, w.win); break;
    case Op::Win_flush_all: MPI_Win_flush_all(w.win); break;
    case Op::Win_flush_local_all: MPI_Win_flush_local_all(w.win); break;
    case Op::Win_post:
    case Op::Win_start: {
        MPI_Group all = MPI_GROUP_NULL;
        MPI_Group group = MPI_GROUP_NULL;
        PMPI_Win_get_group(w.win, &all);
        PMPI_Group_incl(all, static_cast<int>(call.group.size()), call.group.data(), &group);
        if (call.op == Op::Win_post) {
            MPI_Win_post(group, static_cast<int>(call.assertion), w.win);
        } else {
            MPI_Win_start(group, static_cast<int>(call.assertion), w.win);
        }
        PMPI_Group_free(&group);
        PMPI_Group_free(&all);
        break;
    }
    case Op::Win_complete: MPI_Win_complete(w.win); break;
    case Op::Win_attach: {
        // Accesses go to the memory attached when the window was made; this is the program's own
        // attachment, as large, so that attaching costs what it did.
        w.attached.push_back(std::make_unique<char[]>(static_cast<size_t>(std::max<int64_t>(call.bytes, 1))));
        MPI_Win_attach(w.win, w.attached.back().get(), static_cast<MPI_Aint>(std::max<int64_t>(call.bytes, 1)));
        break;
    }
    case Op::Win_detach:
        if (w.attached.empty()) break;
        MPI_Win_detach(w.win, w.attached.front().get());
        w.attached.erase(w.attached.begin());
        break;
    case Op::Win_wait: MPI_Win_wait(w.win); break;
    default: return false;
    }
    return true;
}

}  // namespace htrace::replay
