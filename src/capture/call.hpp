#pragma once
// One intercepted MPI call, as the generated wrappers see it: a re-entry guard, the time it began,
// and the arguments the tracer reads (CallArgs, always as C handles, also for Fortran callers).

#include "capture/signature.hpp"
#include "trace/operation.hpp"

#include <mpi.h>

#include <cstdint>

namespace htrace::capture {

// The argument roles of mpi_functions.py, as bits: which of CallArgs' fields an operation sets.
namespace arg {
enum : uint32_t {
    sendbuf = 1u << 0, count = 1u << 1, datatype = 1u << 2, recvcount = 1u << 3, recvtype = 1u << 4,
    sendcounts = 1u << 5, recvcounts = 1u << 6, sendtypes = 1u << 7, recvtypes = 1u << 8, peer = 1u << 9,
    source = 1u << 10, root = 1u << 11, tag = 1u << 12, recvtag = 1u << 13, comm = 1u << 14,
    newcomm = 1u << 15, freecomm = 1u << 16, request = 1u << 17, request_count = 1u << 18,
    requests = 1u << 19, status = 1u << 20, statuses = 1u << 21, index = 1u << 22, flag = 1u << 23,
    outcount = 1u << 24, indices = 1u << 25, newcomm_later = 1u << 26,
};
}  // namespace arg

// The argument roles `op` has (0 for opaque operations).
uint32_t operation_args(Op op);

struct CallArgs {
    const void* sendbuf = nullptr;
    int count = 0;
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    int recvcount = 0;
    MPI_Datatype recvtype = MPI_DATATYPE_NULL;
    const int* sendcounts = nullptr;
    const int* recvcounts = nullptr;
    const MPI_Datatype* sendtypes = nullptr;
    const MPI_Datatype* recvtypes = nullptr;
    int peer = 0;
    int source = 0;
    int root = 0;
    int tag = 0;
    int recvtag = 0;
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Comm newcomm = MPI_COMM_NULL;
    MPI_Comm* newcomm_slot = nullptr;          // newcomm_later: where the handle will be
    MPI_Fint* newcomm_fortran_slot = nullptr;  //   (as a Fortran handle)
    MPI_Request request = MPI_REQUEST_NULL;  // created by the call
    int request_count = 0;
    const MPI_Request* requests = nullptr;   // given to a completion call, as they were before it
    const MPI_Status* status = nullptr;
    const MPI_Status* statuses = nullptr;
    int index = MPI_UNDEFINED;
    int flag = 0;
    int outcount = 0;
    const int* indices = nullptr;
};

// Where the application called the wrapper this expands in.
#define HTRACE_CALL_SITE                                                          \
    ::htrace::capture::CallSite                                                   \
    {                                                                             \
        reinterpret_cast<uintptr_t>(__builtin_return_address(0)),                 \
            reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())                    \
    }

class Call {
public:
    Call(Op op, CallSite site) noexcept;
    ~Call();
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

    // False inside another wrapper (MPI calling MPI), outside MPI_Init..MPI_Finalize, or when the
    // tracer is off: the wrapper then only passes the call on.
    bool recording() const { return recording_; }
    Op op() const { return op_; }
    CallArgs& args() { return args_; }
    const CallArgs& args() const { return args_; }
    // Records the call once the MPI library returned `rc`; never throws.
    void finish(int rc) noexcept;

    // C arguments.
    const MPI_Request* keep_requests(const MPI_Request* requests, int count);
    MPI_Status* status_or_own(MPI_Status* status);
    MPI_Status* statuses_or_own(MPI_Status* statuses, int count);

    // Fortran arguments (mpif.h, `use mpi`, `use mpi_f08`).
    const MPI_Request* requests_from_fortran(const MPI_Fint* requests, int count);
    MPI_Fint* fortran_status_or_own(MPI_Fint* status);
    MPI_Fint* fortran_statuses_or_own(MPI_Fint* statuses, int count);
    const MPI_Status* status_from_fortran(const MPI_Fint* status);
    const MPI_Status* status_from_fortran_f08(const MPI_Fint* status);
    const MPI_Status* statuses_from_fortran(const MPI_Fint* statuses, int count);
    const MPI_Status* statuses_from_fortran_f08(const MPI_Fint* statuses, int count);
    const int* indices_from_fortran(const MPI_Fint* indices, int count);
    const MPI_Datatype* types_from_fortran(const MPI_Fint* types, int count);

private:
    Op op_;
    CallSite site_;
    bool recording_;
    double entered_;
    CallArgs args_;
    MPI_Status own_status_;
};

}  // namespace htrace::capture
