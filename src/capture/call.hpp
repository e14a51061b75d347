#pragma once
// One intercepted MPI call, as the generated wrappers see it: a re-entry guard, the time it began,
// and the arguments the tracer reads (CallArgs, always as C handles, also for Fortran callers).

#include "capture/clock.hpp"
#include "capture/signature.hpp"
#include "trace/operation.hpp"

#include <fcntl.h>
#include <mpi.h>

#include <cstdint>
#include <type_traits>

namespace htrace::capture {

// The argument roles of mpi_functions.py, as bits: which of CallArgs' fields an operation sets.
namespace arg {
enum : uint64_t {
    sendbuf = 1ull << 0, count = 1ull << 1, datatype = 1ull << 2, recvcount = 1ull << 3, recvtype = 1ull << 4,
    sendcounts = 1ull << 5, recvcounts = 1ull << 6, sendtypes = 1ull << 7, recvtypes = 1ull << 8, peer = 1ull << 9,
    source = 1ull << 10, root = 1ull << 11, tag = 1ull << 12, recvtag = 1ull << 13, comm = 1ull << 14,
    newcomm = 1ull << 15, freecomm = 1ull << 16, request = 1ull << 17, request_count = 1ull << 18,
    requests = 1ull << 19, status = 1ull << 20, statuses = 1ull << 21, index = 1ull << 22, flag = 1ull << 23,
    outcount = 1ull << 24, indices = 1ull << 25, persistent = 1ull << 26, message = 1ull << 27,
    matched_message = 1ull << 28, newcomm_later = 1ull << 29,
    win = 1ull << 30, newwin = 1ull << 31, freewin = 1ull << 32, win_size = 1ull << 33, target_count = 1ull << 34,
    target_type = 1ull << 35, assertion = 1ull << 36, lock_type = 1ull << 37, group = 1ull << 38,
    file = 1ull << 39, newfile = 1ull << 40, freefile = 1ull << 41, filename = 1ull << 42, amode = 1ull << 43,
    offset = 1ull << 44, whence = 1ull << 45, file_size = 1ull << 46, file_size_out = 1ull << 47, disp = 1ull << 48,
    etype = 1ull << 49, filetype = 1ull << 50, recvbuf = 1ull << 51, buffer_size = 1ull << 52,
};
}  // namespace arg

// The argument roles `op` has (0 for opaque operations).
uint64_t operation_args(Op op);

struct CallArgs {
    const void* sendbuf = nullptr;
    const void* recvbuf = nullptr;
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
    const MPI_Request* started = nullptr;    // MPI_Start(all)'s requests after the call (a handle may change)
    const MPI_Status* status = nullptr;
    const MPI_Status* statuses = nullptr;
    int index = MPI_UNDEFINED;
    int flag = 0;
    int outcount = 0;
    const int* indices = nullptr;
    MPI_Message message = MPI_MESSAGE_NULL;          // returned by Mprobe/Improbe
    MPI_Message matched_message = MPI_MESSAGE_NULL;  // given to Mrecv/Imrecv, as it was before the call
    MPI_Win win = MPI_WIN_NULL;      // one-sided: the window used or freed
    MPI_Win newwin = MPI_WIN_NULL;   //   and the one made
    MPI_Aint win_size = 0;
    int target_count = 0;
    MPI_Datatype target_type = MPI_DATATYPE_NULL;
    int assertion = 0;
    int lock_type = 0;
    MPI_Group group = MPI_GROUP_NULL;
    MPI_File file = MPI_FILE_NULL;  // MPI-IO: the file used, opened or closed
    const char* filename = nullptr;
    int filename_length = -1;  // -1: terminated (C); else a Fortran string's length
    int amode = 0;
    MPI_Offset offset = 0;
    int whence = 0;
    MPI_Offset file_size = 0;
    MPI_Offset disp = 0;
    MPI_Datatype etype = MPI_DATATYPE_NULL;
    MPI_Datatype filetype = MPI_DATATYPE_NULL;
    int buffer_size = 0;  // MPI_Buffer_attach
    // POSIX I/O (capture/posix_io.cpp); filename, offset, whence and file_size as above.
    int fd = -1;                // the descriptor used (a stream's), or the one an open made
    int directory_fd = AT_FDCWD;  // openat's
    int64_t transferred = 0;    // bytes read or written
    int64_t access_mode = 0;    // an open's, as kFileMode* bits (trace/event.hpp)
};

// Call keeps it in a union, which never destroys it.
static_assert(std::is_trivially_destructible_v<CallArgs>);

// Where the application called the wrapper this expands in.
#define HTRACE_CALL_SITE                                                          \
    ::htrace::capture::CallSite                                                   \
    {                                                                             \
        reinterpret_cast<uintptr_t>(__builtin_return_address(0)),                 \
            reinterpret_cast<uintptr_t>(__builtin_dwarf_cfa())                    \
    }

// Called by Call::finish for every recorded call, which began at `entered` and came back from the
// MPI library at `returned` (now_ticks()); in capture/tracer.cpp. Never throws.
void record_call(Op op, const CallArgs& args, int rc, double entered, double returned, CallSite site) noexcept;

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
    // Only while recording().
    CallArgs& args() { return args_; }
    const CallArgs& args() const { return args_; }
    // Records the call once the MPI library returned `rc`; never throws.
    void finish(int rc) noexcept
    {
        if (recording_) record_call(op_, args_, rc, entered_, now_ticks(), site_);
    }

    // C arguments.
    const MPI_Request* keep_requests(const MPI_Request* requests, int count);
    MPI_Status* status_or_own(MPI_Status* status);
    MPI_Status* statuses_or_own(MPI_Status* statuses, int count);

    // Fortran arguments (mpif.h, `use mpi`, `use mpi_f08`).
    const MPI_Request* requests_from_fortran(const MPI_Fint* requests, int count);
    const MPI_Request* started_from_fortran(const MPI_Fint* requests, int count);
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
    // Made only for a call that records: one inside another wrapper (MPI calling MPI, the MPI
    // library's own POSIX I/O) passes straight on without writing its few hundred bytes.
    union {
        CallArgs args_;
    };
    MPI_Status own_status_;
};

}  // namespace htrace::capture
