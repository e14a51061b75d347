#pragma once
// Issues a schedule (replay/schedule.hpp) as real MPI calls, with MPI_BYTE buffers of the scheduled
// sizes, and counts what it issued per operation.

#include "replay/compute.hpp"
#include "replay/io_executor.hpp"
#include "replay/one_sided_executor.hpp"
#include "replay/schedule.hpp"
#include "replay/watchdog.hpp"
#include "timeline/rank_timeline.hpp"

#include <mpi.h>

#include <limits>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace htrace::replay {

struct IssuedTotals {
    uint64_t calls = 0;
    uint64_t bytes = 0;  // sends and collectives: the send side; receives: what they receive
    double seconds = 0;  // in the calls (clock_seconds: simulated under SimGrid)
};

class Executor {
public:
    // `watchdog` (may be null) is told of every call that may block; `files` (may be null: MPI-IO
    // calls are then left out) does the MPI-IO; computation gaps longer than `max_compute` seconds
    // are cut to it.
    explicit Executor(Watchdog* watchdog = nullptr, Files* files = nullptr,
                      double max_compute = std::numeric_limits<double>::infinity());
    ~Executor();
    Executor(const Executor&) = delete;
    Executor& operator=(const Executor&) = delete;

    void issue(const ScheduledCall& call);
    // From now on, each call issued goes into `timeline` (not owned; null: none) with its times in
    // clock_seconds() less `origin`.
    void record_into(timeline::RankTimeline* timeline, double origin)
    {
        timeline_ = timeline;
        origin_ = origin;
    }

    // Indexed by Op (modelled operations only).
    const std::vector<IssuedTotals>& totals() const { return totals_; }
    // Calls of the schedule left out, by Op: MPI-IO without `files`.
    const std::vector<uint64_t>& left_out() const { return left_out_; }
    // The computation spent, and the gaps cut to get there.
    double compute_seconds() const { return compute_seconds_; }
    const ComputeBound& compute_bound() const { return compute_bound_; }

private:
    // Scratch memory: contents do not matter, only sizes. A buffer that grows keeps its old block
    // alive, because pending operations may still point into it.
    class Scratch {
    public:
        char* at_least(int64_t bytes);

    private:
        std::unique_ptr<char[]> current_;
        int64_t size_ = 0;
        std::vector<std::unique_ptr<char[]>> retired_;
    };

    void issue_call(const ScheduledCall& call);
    void compute(const ScheduledCall& call);
    void receive(const ScheduledCall& call);
    void probe(const ScheduledCall& call);
    void send(const ScheduledCall& call);
    void sendrecv(const ScheduledCall& call);
    void buffer(const ScheduledCall& call);
    void complete(const ScheduledCall& call);
    void collective(const ScheduledCall& call);
    struct CollectiveArgs;
    MPI_Request* collective_request(const ScheduledCall& call);
    bool issue_uniform_collective(Op op, const CollectiveArgs& a);
    bool issue_counted_collective(Op op, const CollectiveArgs& a);
    bool issue_neighbourhood_collective(Op op, const CollectiveArgs& a);
    void one_sided(const ScheduledCall& call);
    void file_io(const ScheduledCall& call);
    void free_comm(const ScheduledCall& call);
    void create(const ScheduledCall& call);
    static MPI_Comm with_topology(MPI_Comm made, const Topology& topology);
    // Communicators replay gave a topology (a duplicate of one has it too); SMPI has no MPI_Topo_test.
    std::unordered_set<int64_t> shaped_;
    MPI_Comm comm(int64_t id) const;
    MPI_Request* new_request(RequestId id);
    void count(Op op, int64_t bytes);

    // Node-based: Comm_idup fills its entry in place when its request completes.
    std::unordered_map<int64_t, MPI_Comm> comms_;
    // Communicators Comm_idup is still making, by id: their request. Where completions were drawn
    // (p < 100), one may be used before the drawn completion of its request: it is waited for first.
    std::unordered_map<int64_t, RequestId> idup_pending_;
    void settle_idup(int64_t comm);
    // Non-blocking collectives by communicator id: where completions were drawn, one may still be
    // pending when its communicator is freed, which Open MPI does not survive; it is waited for first.
    std::unordered_map<int64_t, std::vector<RequestId>> collective_requests_;
    // The peer communicator of replayed MPI_Intercomm_create: the leaders' handshake on it cannot
    // meet a replayed message.
    MPI_Comm bridge_ = MPI_COMM_NULL;
    std::unordered_map<RequestId, MPI_Request> requests_;
    // Messages a replayed MPI_Mprobe took, oldest first, until an MPI_Mrecv of their peer and tag.
    struct ProbedMessage {
        int64_t comm;
        int peer;
        int64_t tag;
        MPI_Message message;
    };
    std::vector<ProbedMessage> probed_;
    std::vector<MPI_Request> waiting_;
    Scratch send_;
    Scratch receive_;
    std::vector<int> counts_;
    std::vector<int> displacements_;
    std::vector<int> recv_counts_;
    std::vector<int> recv_displacements_;
    std::vector<MPI_Datatype> types_;
    std::vector<IssuedTotals> totals_;
    std::vector<uint64_t> left_out_;
    Windows windows_;  // freed after the communicators they were made on, as MPI allows
    // The buffer of buffered sends, while one is attached (MPI_Buffer_detach gives it back).
    std::unique_ptr<char[]> attached_;
    Watchdog* watchdog_;
    Files* files_;
    timeline::RankTimeline* timeline_ = nullptr;
    double origin_ = 0;
    ComputeBound compute_bound_;
    double compute_seconds_ = 0;
    // The operation the call being issued was counted as, whose time it is: issue_call may issue
    // another than the schedule's (a Waitany of one request as MPI_Waitall, Ibsend as MPI_Isend).
    size_t counted_ = 0;
};

}  // namespace htrace::replay
