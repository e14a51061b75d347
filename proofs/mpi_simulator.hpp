#pragma once
// A small simulator of MPI that runs generated programs (program_generator.hpp) and records what the
// tracer would record of them, for the deadlock-freedom checker.
//
// Programs are C++20 coroutines, one per rank, that co_await simulated MPI calls (`Mpi`). The
// simulator advances one rank or delivers one message envelope at a time, chosen by a seeded random
// scheduler, so what timing decides in a real run varies from run to run here too: which source a
// wildcard receive matches, which request Waitany returns, how often a polling MPI_Test fails,
// whether a cancel comes before the message. Its semantics are the strictest MPI allows:
//   - every send is a rendezvous: it completes only when a receive has matched it (no buffering);
//   - envelopes travel per (source, destination) in order and are matched, at the destination, against
//     the posted receives in the order they were posted, else wait in arrival order for one
//     (non-overtaking per source, destination, communicator and tag; wildcards take what is there);
//   - collectives and communicator creations complete when every member has called them.
//
// Each rank's calls are recorded as `htrace::RecordedCall`s with the roles and values that
// src/capture/tracer.cpp gives them (Tracer::describe, add_point_to_point, add_completion,
// add_collective; communicator ids as src/capture/communicators.cpp numbers them), and, as ground
// truth, the calls a causal replay of the rank must make (`Action`).

#include "merge/loop_folding.hpp"

#include <boost/random/mersenne_twister.hpp>

#include <coroutine>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace htrace::proofs::sim {

// ---- What programs see ----------------------------------------------------------------------------

// MPI's symbolic values, as programs pass them (the same numbers as the trace's symbols).
inline constexpr int32_t kAnySourceArg = -1;   // MPI_ANY_SOURCE
inline constexpr int32_t kProcNullArg = -2;    // MPI_PROC_NULL
inline constexpr int64_t kAnyTagArg = -1;      // MPI_ANY_TAG
inline constexpr int64_t kUndefined = -32766;  // MPI_UNDEFINED (a split colour, Waitany's index)

// A request as the program holds it: the handle MPI handed back (low 32 bits: all a tracer sees;
// libraries share and reuse handles) and, above it, which request it is (the simulator's own
// bookkeeping, to know what the program meant where handles do not tell).
using Request = uint64_t;
inline constexpr Request kRequestNull = 0;
inline constexpr uint32_t handle_of(Request request) { return static_cast<uint32_t>(request); }
using Site = uint64_t;     // a call site: the signature the tracer would compute for it

struct Comm {
    int32_t handle = -1;  // -1: MPI_COMM_NULL
    int32_t rank = -1;    // the caller's rank in it
    int32_t size = 0;
    bool valid() const { return handle >= 0; }
};

struct Status {
    int32_t source = kProcNullArg;  // in the communicator of the call
    int64_t tag = kAnyTagArg;
    int64_t bytes = 0;
    bool cancelled = false;
};

// What a call returned: the fields its MPI function sets.
struct Result {
    Status status;
    std::vector<Status> statuses;  // Waitall/Testall: per request; Waitsome/Testsome: per index
    int32_t index = static_cast<int32_t>(kUndefined);  // Waitany/Testany
    std::vector<int32_t> indices;  // Waitsome/Testsome
    bool flag = false;             // Test*, Test_cancelled
    Request request = kRequestNull;  // a non-blocking call's request
    Comm comm;                     // a creation's new communicator
};

// ---- Coroutines -------------------------------------------------------------------------------------

// A rank's program, or a part of it that another part co_awaits.
class Task {
public:
    struct promise_type {
        std::coroutine_handle<> continuation;
        std::exception_ptr error;

        Task get_return_object() { return Task(std::coroutine_handle<promise_type>::from_promise(*this)); }
        std::suspend_always initial_suspend() noexcept { return {}; }
        auto final_suspend() noexcept
        {
            struct Final {
                bool await_ready() noexcept { return false; }
                std::coroutine_handle<> await_suspend(std::coroutine_handle<promise_type> done) noexcept
                {
                    const auto next = done.promise().continuation;
                    return next ? next : std::noop_coroutine();
                }
                void await_resume() noexcept {}
            };
            return Final{};
        }
        void return_void() {}
        void unhandled_exception() { error = std::current_exception(); }
    };

    Task() = default;
    explicit Task(std::coroutine_handle<promise_type> handle) : handle_(handle) {}
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept
    {
        if (this != &other) {
            if (handle_) handle_.destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task()
    {
        if (handle_) handle_.destroy();
    }

    bool await_ready() const noexcept { return false; }
    std::coroutine_handle<> await_suspend(std::coroutine_handle<> caller) noexcept
    {
        handle_.promise().continuation = caller;
        return handle_;
    }
    void await_resume() const
    {
        if (handle_.promise().error) std::rethrow_exception(handle_.promise().error);
    }

    std::coroutine_handle<promise_type> handle() const { return handle_; }

private:
    std::coroutine_handle<promise_type> handle_;
};

class Simulator;

// One simulated MPI call a rank is about to make (internal to the simulator; programs build them
// through Mpi).
struct Call {
    enum class Kind : uint8_t {
        send, isend, recv, irecv, sendrecv, wait, waitall, waitany, waitsome, test, testall, testany, testsome,
        cancel, test_cancelled, collective, split, dup, free,
    };
    Kind kind = Kind::send;
    Op op{};
    Site site = 0;
    double compute = 0;  // seconds computed since the previous call
    Comm comm;
    int32_t peer = 0;    // destination, or requested source
    int64_t tag = 0;
    int64_t bytes = 0;
    int32_t source = 0;  // Sendrecv: the receive side
    int64_t recv_tag = 0;
    int64_t recv_bytes = 0;
    int32_t root = -1;
    int64_t color = 0;
    int64_t key = 0;
    Request* request = nullptr;                // Wait, Test, Cancel: the program's variable
    std::vector<Request>* requests = nullptr;  // Wait*/Test* over arrays: the program's array
    Comm* freed = nullptr;                     // Comm_free: the program's variable
    Status status;                             // Test_cancelled: the status asked about
};

// The simulated MPI of one rank: every call is co_awaited, and returns what MPI would.
class Mpi {
public:
    Mpi(Simulator& simulator, Rank rank) : simulator_(&simulator), rank_(rank) {}

    struct Awaiter {
        Simulator* simulator;
        Rank rank;
        Call call;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> resume_at);
        Result await_resume();
    };

    Rank world_rank() const { return rank_; }
    Comm world() const;
    // Computation before the next call (adds up until a call is made).
    void compute(double seconds) { pending_compute_ += seconds; }

    Awaiter send(Site site, Op op, const Comm& comm, int32_t dest, int64_t tag, int64_t bytes);   // Send, Ssend
    Awaiter isend(Site site, Op op, const Comm& comm, int32_t dest, int64_t tag, int64_t bytes);  // Isend, Issend
    Awaiter recv(Site site, const Comm& comm, int32_t source, int64_t tag, int64_t bytes);
    Awaiter irecv(Site site, const Comm& comm, int32_t source, int64_t tag, int64_t bytes);
    Awaiter sendrecv(Site site, const Comm& comm, int32_t dest, int64_t send_tag, int64_t send_bytes, int32_t source,
                     int64_t recv_tag, int64_t recv_bytes);
    Awaiter sendrecv_replace(Site site, const Comm& comm, int32_t dest, int64_t send_tag, int32_t source,
                             int64_t recv_tag, int64_t bytes);
    Awaiter wait(Site site, Request& request);
    Awaiter test(Site site, Request& request);
    Awaiter waitall(Site site, std::vector<Request>& requests);
    Awaiter testall(Site site, std::vector<Request>& requests);
    Awaiter waitany(Site site, std::vector<Request>& requests);
    Awaiter testany(Site site, std::vector<Request>& requests);
    Awaiter waitsome(Site site, std::vector<Request>& requests);
    Awaiter testsome(Site site, std::vector<Request>& requests);
    Awaiter cancel(Site site, Request& request);
    Awaiter test_cancelled(Site site, const Status& status);
    Awaiter barrier(Site site, const Comm& comm);
    Awaiter bcast(Site site, const Comm& comm, int32_t root, int64_t bytes);
    Awaiter allreduce(Site site, const Comm& comm, int64_t bytes);
    Awaiter reduce(Site site, const Comm& comm, int32_t root, int64_t bytes);
    Awaiter comm_split(Site site, const Comm& comm, int64_t color, int64_t key);
    Awaiter comm_dup(Site site, const Comm& comm);
    Awaiter comm_free(Site site, Comm& comm);

private:
    Awaiter make(Call call);

    Simulator* simulator_;
    Rank rank_;
    double pending_compute_ = 0;
};

// ---- What a run gives ---------------------------------------------------------------------------------

// One call a causal replay of the rank must make, as the program made it: the ground truth the
// checker compares replay schedules with (requests named by the index, in the rank's actions, of
// the action that created them).
struct Action {
    enum class Kind : uint8_t { send, receive, sendrecv, cancel, complete, collective, create_comm, free_comm };
    Kind kind = Kind::send;
    Op op{};
    int64_t comm = 0;          // the tracer's id of the communicator
    Rank peer = -1;            // world rank or kProcNull: destination, or the source a receive matched
    int32_t peer_in_comm = -1;
    int64_t tag = 0;           // a receive: the tag it matched
    int64_t bytes = 0;         // a receive: its capacity
    Rank source = -1;          // sendrecv's receive side
    int32_t source_in_comm = -1;
    int64_t recv_tag = 0;
    int64_t recv_bytes = 0;
    int32_t root = -1;
    bool creates_request = false;
    std::vector<size_t> requests;  // cancel, complete: ascending
    int64_t new_comm = 0;          // create_comm (kNoComm: the rank got none)
    std::vector<Rank> members;     // create_comm: world ranks, in new-communicator order

    bool operator==(const Action&) const = default;
};

std::string describe_action(const Action& action);

struct RankRecord {
    std::vector<RecordedCall> calls;  // as the tracer hands them to its LoopFolder, MPI_Init to MPI_Finalize
    std::vector<Action> actions;
    uint64_t failed_tests = 0;        // polling calls that completed nothing
    uint64_t wildcard_matches = 0;    // wildcard receives that matched a message
    uint64_t cancelled = 0;           // receives whose cancel succeeded
    uint64_t misnamed = 0;            // completions where the tracer, going by handles, named other requests
};

struct RunOptions {
    // Standard sends (MPI_Send, MPI_Isend) of at most this many bytes complete at once, buffered, as
    // MPI libraries send small messages eagerly; 0: every send waits for its receive (rendezvous).
    int64_t eager_limit = 0;
    // Open MPI hands back one shared request handle for requests complete when they are made (on
    // MPI_PROC_NULL, and sends completed at once: checked with Open MPI 4.1.4); MPICH gives each its own.
    bool shared_complete_request = false;
    // Libraries reuse the handles of completed requests.
    bool reuse_request_handles = false;
};

using Program = std::function<Task(Mpi&)>;

struct RunResult {
    std::vector<RankRecord> ranks;
    uint64_t steps = 0;
};

// Runs `program` on `ranks` ranks, the scheduler seeded with `seed`. Throws std::runtime_error when
// the program deadlocks, livelocks or misuses MPI: generated programs must not.
RunResult run(const Program& program, int32_t ranks, uint64_t seed, const RunOptions& options = {});

}  // namespace htrace::proofs::sim
