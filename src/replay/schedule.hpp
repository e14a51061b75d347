#pragma once
// What one rank does when a trace is replayed: the schedule of MPI calls it issues, generated from
// the trace, a seed and the rank alone. No MPI here: h-replay issues these calls, and the proofs
// checker runs the same generation against a model of MPI matching.
//
// Every rank walks the whole trace in the same order and draws every histogram value of every
// participant from one sampler seeded alike (histogram/sampler.hpp: without replacement, so recorded
// totals come back), so each rank knows what every other rank does:
//   - a loop's count is drawn when an instance of it starts: one count for all its participants if
//     it holds collectives (their instances must meet), else one per participant, in rank order;
//   - a send is issued by its participant; its destination posts a non-blocking receive for it at the
//     same point of the walk (before the sender's own call, for a send to itself);
//   - recorded receives and probes are not replayed;
//   - requests are completed where the traced rank waited (a completion that completed something, a
//     blocking receive for the receives), and at the latest before the rank's next collective or
//     communicator change, and at the end;
//   - collectives and communicator creations are issued by their participants, with values that
//     every participant drew alike.
// The walk streams calls to a sink: the trace is never expanded into per-rank lists.

#include "trace/event.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace htrace::replay {

using RequestId = uint64_t;  // 1, 2, ... per rank; 0 means "blocking, no request"

enum class CallKind : uint8_t {
    compute,       // spend `seconds` computing
    send,          // `op` (Send, Ssend, Isend, Issend) to `peer` with `bytes` and `tag`
    post_receive,  // Irecv from `peer` of `bytes` with `tag`, for a send aimed at this rank
    complete,      // wait for `requests`
    collective,    // `op` on `comm`; sizes below
    create_comm,   // make communicator `new_comm` with `members` (a collective over them)
    free_comm,     // free `comm`
};

struct ScheduledCall {
    CallKind kind = CallKind::compute;
    Op op{};                      // the MPI function to issue (send, collective); the recorded one otherwise
    int64_t comm = 0;             // this rank's id of the communicator (world 0, self 1)
    Rank peer = -1;               // send: destination, post_receive: source; world ranks, or kProcNull
    int32_t peer_in_comm = -1;    // the same peer as a rank of `comm` (MPI_PROC_NULL: kProcNull)
    int64_t tag = 0;
    int64_t bytes = 0;            // send, post_receive; collective: this rank's send side
    int64_t recv_bytes = 0;       // collective: this rank's receive side
    int32_t root = -1;            // rooted collective: the root's rank in `comm`
    bool in_place = false;        // collective: this rank passes MPI_IN_PLACE as its send buffer
    RequestId request = 0;        // the request a non-blocking call creates
    std::vector<RequestId> requests;      // complete
    std::vector<int64_t> send_counts;     // v-collectives: bytes per rank of `comm`, send side
    std::vector<int64_t> recv_counts;     //                and receive side
    int64_t new_comm = 0;                 // create_comm
    std::vector<Rank> members;            // create_comm: world ranks in new-communicator order
    double seconds = 0;                   // compute

    bool operator==(const ScheduledCall&) const = default;
};

// What the generation met that it cannot replay, by recorded operation name (neighbour collectives
// have no recorded topology; calls on communicators the trace never shows being created).
struct ScheduleSummary {
    std::map<std::string, uint64_t> not_replayed;
    uint64_t by_name_only = 0;  // opaque calls: their computation is replayed, the calls are not
};

using CallSink = std::function<void(const ScheduledCall&)>;

// Streams the schedule of `rank` to `sink`, in order. The last calls complete every request still
// pending. With `compute` false no compute calls are produced (h-replay --no-compute).
ScheduleSummary generate_schedule(const Trace& trace, uint64_t seed, Rank rank, const CallSink& sink,
                                  bool compute = true);

}  // namespace htrace::replay
