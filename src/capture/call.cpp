#include "capture/call.hpp"

#include "capture/clock.hpp"
#include "capture/fortran.hpp"
#include "capture/tracer.hpp"
#include "trace/hot_path.hpp"

#include <cstring>
#include <new>
#include <vector>

namespace htrace::capture {
namespace {

HTRACE_RANK_LOCAL int depth = 0;

// One set per thread is enough: nested calls pass through without recording.
struct Scratch {
    std::vector<MPI_Request> requests;
    std::vector<MPI_Request> started;
    std::vector<MPI_Status> statuses;
    std::vector<MPI_Fint> fortran_statuses;
    std::vector<int> indices;
    std::vector<MPI_Datatype> types;
};
HTRACE_RANK_LOCAL Scratch scratch;

#ifdef MPI_F_STATUS_SIZE
constexpr int kFortranStatusSize = MPI_F_STATUS_SIZE;
#else
constexpr int kFortranStatusSize = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
#endif
// Room for any library's Fortran status where the caller passed MPI_STATUS_IGNORE.
constexpr int kOwnFortranStatusSize = 16;
HTRACE_RANK_LOCAL MPI_Fint own_fortran_status[kOwnFortranStatusSize];

bool is_init(Op op) { return op == Op::Init || op == Op::Init_thread; }

#ifdef HTRACE_SIMULATED
// SimGrid's Fortran status is its C status, as integers, and it has no MPI_Status_f2c. Its Fortran
// MPI_STATUS_IGNORE and MPI_STATUSES_IGNORE are variables of its own (its MPI_F_STATUS_IGNORE is 0).
extern "C" MPI_Fint mpi_status_ignore_;
extern "C" MPI_Fint mpi_statuses_ignore_;

void status_f2c(const MPI_Fint* status, MPI_Status* c_status) { std::memcpy(c_status, status, sizeof *c_status); }
bool fortran_status_ignored(const MPI_Fint* status) { return status == &mpi_status_ignore_; }
bool fortran_statuses_ignored(const MPI_Fint* statuses) { return statuses == &mpi_statuses_ignore_; }
#else
// Some MPI libraries declare MPI_Status_f2c's Fortran status without const; none writes it.
void status_f2c(const MPI_Fint* status, MPI_Status* c_status) { PMPI_Status_f2c(const_cast<MPI_Fint*>(status), c_status); }
bool fortran_status_ignored(const MPI_Fint* status) { return status == MPI_F_STATUS_IGNORE; }
bool fortran_statuses_ignored(const MPI_Fint* statuses) { return statuses == MPI_F_STATUSES_IGNORE; }
#endif

}  // namespace

HTRACE_HOT Call::Call(Op op, CallSite site) noexcept
    : op_(op), site_(site), recording_(depth == 0 && (tracer_active() || is_init(op))), entered_(0), own_status_{}
{
    ++depth;
    if (!recording_) return;
    // Default-initialised, as a member would be: `CallArgs()` would zero all 400 bytes first.
    new (&args_) CallArgs;
    entered_ = now_ticks();
}

HTRACE_HOT Call::~Call() { --depth; }

HTRACE_HOT const MPI_Request* Call::keep_requests(const MPI_Request* requests, int count)
{
    if (count <= 0 || requests == nullptr) return nullptr;
    scratch.requests.assign(requests, requests + count);
    return scratch.requests.data();
}

HTRACE_HOT MPI_Status* Call::status_or_own(MPI_Status* status)
{
    return status == MPI_STATUS_IGNORE ? &own_status_ : status;
}

HTRACE_HOT MPI_Status* Call::statuses_or_own(MPI_Status* statuses, int count)
{
    if (statuses != MPI_STATUSES_IGNORE) return statuses;
    scratch.statuses.resize(static_cast<size_t>(std::max(count, 1)));
    return scratch.statuses.data();
}

const MPI_Request* Call::requests_from_fortran(const MPI_Fint* requests, int count)
{
    scratch.requests.clear();
    for (int i = 0; i < count; ++i) scratch.requests.push_back(PMPI_Request_f2c(requests[i]));
    return scratch.requests.empty() ? nullptr : scratch.requests.data();
}

const MPI_Request* Call::started_from_fortran(const MPI_Fint* requests, int count)
{
    scratch.started.clear();
    for (int i = 0; i < count; ++i) scratch.started.push_back(PMPI_Request_f2c(requests[i]));
    return scratch.started.empty() ? nullptr : scratch.started.data();
}

MPI_Fint* Call::fortran_status_or_own(MPI_Fint* status)
{
    return fortran_status_ignored(status) ? own_fortran_status : status;
}

MPI_Fint* Call::fortran_statuses_or_own(MPI_Fint* statuses, int count)
{
    if (!fortran_statuses_ignored(statuses)) return statuses;
    scratch.fortran_statuses.resize(static_cast<size_t>(std::max(count, 1) * kOwnFortranStatusSize));
    return scratch.fortran_statuses.data();
}

const MPI_Status* Call::status_from_fortran(const MPI_Fint* status)
{
    status_f2c(status, &own_status_);
    return &own_status_;
}

// Open MPI's `use mpi_f08` status has the C status's layout; only source, tag and error are read.
const MPI_Status* Call::status_from_fortran_f08(const MPI_Fint* status)
{
    own_status_.MPI_SOURCE = status[0];
    own_status_.MPI_TAG = status[1];
    own_status_.MPI_ERROR = status[2];
    return &own_status_;
}

const MPI_Status* Call::statuses_from_fortran(const MPI_Fint* statuses, int count)
{
    scratch.statuses.resize(static_cast<size_t>(std::max(count, 1)));
    for (int i = 0; i < count; ++i) status_f2c(statuses + i * kFortranStatusSize, &scratch.statuses[size_t(i)]);
    return scratch.statuses.data();
}

const MPI_Status* Call::statuses_from_fortran_f08(const MPI_Fint* statuses, int count)
{
    constexpr int stride = static_cast<int>(sizeof(MPI_Status) / sizeof(MPI_Fint));
    scratch.statuses.resize(static_cast<size_t>(std::max(count, 1)));
    for (int i = 0; i < count; ++i) {
        scratch.statuses[size_t(i)].MPI_SOURCE = statuses[i * stride];
        scratch.statuses[size_t(i)].MPI_TAG = statuses[i * stride + 1];
        scratch.statuses[size_t(i)].MPI_ERROR = statuses[i * stride + 2];
    }
    return scratch.statuses.data();
}

const int* Call::indices_from_fortran(const MPI_Fint* indices, int count)
{
    scratch.indices.clear();
    for (int i = 0; i < count; ++i) scratch.indices.push_back(index_from_fortran(indices[i]));
    return scratch.indices.data();
}

const MPI_Datatype* Call::types_from_fortran(const MPI_Fint* types, int count)
{
    scratch.types.clear();
    for (int i = 0; i < count; ++i) scratch.types.push_back(PMPI_Type_f2c(types[i]));
    return scratch.types.data();
}

}  // namespace htrace::capture
