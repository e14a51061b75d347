#pragma once
// The operations a trace knows: the MPI functions h-trace models (generated from the one table in
// src/capture/mpi_functions.py), the POSIX I/O functions it records (posix_operations.inc) and,
// after them, opaque operations known only by name.

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace htrace {

enum class OperationKind : uint8_t {
    init, finalize, send, recv, sendrecv, probe, completion, collective, comm_create, comm_free, one_sided, opaque,
    persistent_init, start, request_free, cancel, io, buffer,
};

enum class Op : uint16_t {
#define HTRACE_OPERATION(name, kind) name,
#include "operation_list.inc"
#undef HTRACE_OPERATION
#define HTRACE_POSIX_OPERATION(name) posix_##name,
#include "trace/posix_operations.inc"
#undef HTRACE_POSIX_OPERATION
    first_opaque,
};

OperationKind operation_kind(Op op);
std::string_view operation_name(Op op);  // "MPI_Send"

// The opaque operation for index `i` of the MPI library's generated list of unmodelled functions.
Op opaque_operation(uint32_t index);

// Looks a name up among modelled and opaque operations; an unknown name becomes a new opaque one.
Op operation_by_name(std::string_view name);

inline bool is_one_of(Op op, std::initializer_list<Op> ops)
{
    return std::find(ops.begin(), ops.end(), op) != ops.end();
}

// Whether a call of `op` makes a request that a completion call (or MPI_Request_free) ends: the
// non-blocking sends, receives, collectives, MPI-IO and request-based one-sided calls, MPI_Comm_idup,
// and each request MPI_Start starts. Completed sets count positions among these (completion_set.hpp).
bool creates_request(Op op);

// Collectives over a topology's neighbours (their peers come from the communicator's topology).
bool is_neighbor_collective(Op op);

// POSIX I/O (kind io, like MPI-IO, but a rank's own: never collective). Inline: the tracer asks on
// every call.
inline bool is_posix_io(Op op) { return op >= Op::posix_open && op < Op::first_opaque; }
// open, openat, creat and fopen: POSIX I/O that makes a file of the rank's.
bool is_posix_open(Op op);

// Collectives on a window: its creation, its free and MPI_Win_fence.
bool is_window_collective(Op op);
// MPI-IO calls that every rank of the file's communicator makes together: opening, closing, views,
// sizes, syncs, the shared file pointer's seek, and collective reads and writes.
bool is_collective_io(Op op);
// Collectives, communicator creations and collective MPI-IO: every member of the communicator takes
// part in the same instance.
bool is_collective_or_creation(Op op);

}  // namespace htrace
