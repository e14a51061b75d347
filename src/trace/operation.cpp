#include "trace/operation.hpp"

#include "trace/hot_path.hpp"

#include <array>
#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>

namespace htrace {
namespace {

struct OperationInfo {
    std::string_view name;
    OperationKind kind;
};

constexpr std::array modelled{
#define HTRACE_OPERATION(name, kind) OperationInfo{"MPI_" #name, OperationKind::kind},
#include "operation_list.inc"
#undef HTRACE_OPERATION
#define HTRACE_POSIX_OPERATION(name) OperationInfo{#name, OperationKind::io},
#include "trace/posix_operations.inc"
#undef HTRACE_POSIX_OPERATION
};

// Opaque names are interned once per process; the generated list comes first so its indices are
// the ones the wrappers use.
class OpaqueNames {
public:
    OpaqueNames()
    {
        for (std::string_view name : {
#define HTRACE_OPAQUE(name) std::string_view(name),
#include "opaque_list.inc"
#undef HTRACE_OPAQUE
             }) {
            intern(name);
        }
    }

    uint32_t intern(std::string_view name)
    {
        std::lock_guard lock(mutex_);
        auto found = index_.find(std::string(name));
        if (found != index_.end()) return found->second;
        names_.emplace_back(name);
        const auto index = static_cast<uint32_t>(names_.size() - 1);
        index_.emplace(names_.back(), index);
        return index;
    }

    std::string_view name(uint32_t index)
    {
        std::lock_guard lock(mutex_);
        return index < names_.size() ? std::string_view(names_[index]) : std::string_view("MPI_unknown");
    }

private:
    std::mutex mutex_;
    std::deque<std::string> names_;  // deque: stable addresses for the string_views handed out
    std::unordered_map<std::string, uint32_t> index_;
};

OpaqueNames& opaque_names()
{
    // Never destroyed: wrappers may still name operations while the process exits. (And under
    // SimGrid every simulated rank makes its own, in its own copy of this pointer, which one
    // destructor at exit could not stand for.)
    static OpaqueNames* names = new OpaqueNames;
    return *names;
}

}  // namespace

HTRACE_HOT OperationKind operation_kind(Op op)
{
    const auto index = static_cast<size_t>(op);
    return index < modelled.size() ? modelled[index].kind : OperationKind::opaque;
}

std::string_view operation_name(Op op)
{
    const auto index = static_cast<size_t>(op);
    if (index < modelled.size()) return modelled[index].name;
    return opaque_names().name(static_cast<uint32_t>(index - modelled.size()));
}

Op opaque_operation(uint32_t index)
{
    return static_cast<Op>(static_cast<uint32_t>(Op::first_opaque) + index);
}

Op operation_by_name(std::string_view name)
{
    for (size_t i = 0; i < modelled.size(); ++i) {
        if (modelled[i].name == name) return static_cast<Op>(i);
    }
    return opaque_operation(opaque_names().intern(name));
}

bool creates_request(Op op)
{
    switch (operation_kind(op)) {
    case OperationKind::send: return is_one_of(op, {Op::Isend, Op::Ibsend, Op::Issend, Op::Irsend});
    case OperationKind::recv: return op == Op::Irecv || op == Op::Imrecv;
    case OperationKind::collective: return operation_name(op).substr(0, 5) == "MPI_I";
    case OperationKind::start: return true;
    case OperationKind::comm_create: return op == Op::Comm_idup;
    case OperationKind::io: return operation_name(op).starts_with("MPI_File_i");
    case OperationKind::one_sided: return is_one_of(op, {Op::Rput, Op::Rget, Op::Raccumulate, Op::Rget_accumulate});
    default: return false;
    }
}

bool is_neighbor_collective(Op op)
{
    return is_one_of(op, {Op::Neighbor_allgather, Op::Neighbor_allgatherv, Op::Neighbor_alltoall,
                          Op::Neighbor_alltoallv, Op::Neighbor_alltoallw, Op::Ineighbor_allgather,
                          Op::Ineighbor_allgatherv, Op::Ineighbor_alltoall, Op::Ineighbor_alltoallv,
                          Op::Ineighbor_alltoallw});
}

HTRACE_HOT bool is_window_collective(Op op)
{
    return is_one_of(op, {Op::Win_create, Op::Win_allocate, Op::Win_allocate_shared, Op::Win_create_dynamic,
                          Op::Win_free, Op::Win_fence});
}


bool is_posix_open(Op op) { return is_one_of(op, {Op::posix_open, Op::posix_openat, Op::posix_creat, Op::posix_fopen}); }

bool is_collective_io(Op op)
{
    if (operation_kind(op) != OperationKind::io || is_posix_io(op)) return false;
    if (is_one_of(op, {Op::File_open, Op::File_close, Op::File_set_size, Op::File_preallocate, Op::File_set_view,
                       Op::File_sync, Op::File_seek_shared})) {
        return true;
    }
    const std::string_view name = operation_name(op);
    return name.find("_all") != std::string_view::npos || name.find("_ordered") != std::string_view::npos;
}

bool is_collective_or_creation(Op op)
{
    const OperationKind kind = operation_kind(op);
    return kind == OperationKind::collective || kind == OperationKind::comm_create || is_collective_io(op);
}

}  // namespace htrace
