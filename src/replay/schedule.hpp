#pragma once
// What one rank does when a trace is replayed: the schedule of MPI calls it issues, generated from
// the trace, a seed and the rank alone. No MPI here: h-replay issues these calls, and the proofs
// checker runs the same generation against a model of MPI matching.
//
// Every rank walks the whole trace in the same order and draws every histogram value of every
// participant from one sampler seeded alike (histogram/sampler.hpp: without replacement, so recorded
// totals come back), so each rank knows what every other rank does (rank_stream.hpp). A loop's count
// is drawn when an instance of it starts: one count for all its participants if it holds collectives
// (their instances must meet), else one per participant.
//
// Sends, collectives and communicator creations are issued by their participants, where the traced
// rank made them, with the values every participant drew alike. Receives and completions keep cause
// and effect in one of two ways, the same on every rank (ReplayMode):
//
//   - causal: every rank issues its own receives where it made them (a blocking receive as a
//     blocking receive, an MPI_Irecv at its point; a wildcard from the source and tag it matched)
//     and completes requests where it completed them (the requests its Wait* call, or a Test* call
//     that completed something, completed). Polling calls that completed nothing, and probes, are
//     not replayed. The schedule is the traced run's own, so a rank that waited for a message waits
//     for it again, however the walk orders ranks. This needs every point-to-point value but sizes
//     exact (not drawn; receives then take the largest message) and every message paired with a
//     receive: causal_replay_obstacle() says when it cannot.
//
//   - paired: where values were drawn, each rank still knows every message aimed at it. Its receives,
//     in its own order, take those messages in MPI's non-overtaking order: a receive takes the
//     earliest message that fits it (its source and tag, where they are exact) among those already
//     sent in walk order and, looking ahead, those sent before the receive's completion; the receive
//     is posted when it is met (or when the message is, if that is earlier) and waited for where the
//     rank completed it. A message no receive takes is received as the walk meets its send (posted
//     there, completed before the rank's next collective or communicator change, or at the end).
//
// In both modes requests still pending at the end are completed by the last call.
// The walk streams calls to a sink: the trace is never expanded into per-rank lists; the look-ahead
// keeps only this rank's items between a receive and its completion (docs/design.md, "Look-ahead"). Why
// neither mode can deadlock: proofs/README.md.

#include "trace/event.hpp"
#include "trace/topology.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace htrace::replay {

using RequestId = uint64_t;  // 1, 2, ... per rank; 0 means "blocking, no request"

enum class CallKind : uint8_t {
    compute,     // spend `seconds` computing
    send,        // `op` (Send, Ssend, Bsend, Isend, Issend, Ibsend) to `peer` with `bytes` and `tag`
    receive,     // `op` (Recv, or Irecv with `request`) from `peer` of up to `bytes` with `tag`; Mrecv and
                 // Imrecv receive the message a `probe` of the same peer and tag took, where there is one
    probe,       // `op` Mprobe: take the next message from `peer` with `tag` off the queue, for an Mrecv
    sendrecv,    // `op` (Sendrecv, Sendrecv_replace): to `peer` (`tag`, `bytes`), from `source` (`recv_tag`,
                 // up to `recv_bytes`)
    complete,    // wait for `requests`, as `op` (Wait, Waitall, Waitany, Waitsome) did; or, as
                 // Request_free, free them without waiting (they complete unseen)
    collective,  // `op` on `comm`; sizes below
    create_comm, // make communicator `new_comm` (kNoComm: none for this rank) with `members`, as `op`:
                 // Comm_split, Comm_dup or Comm_idup (with `request`) of `comm` (all its members take
                 // part), Comm_create_group, Intercomm_create from `comm` to the group led by
                 // `remote_leader`, or Intercomm_merge of `comm` (`high`)
    free_comm,   // free `comm` (Comm_free or Comm_disconnect)
    one_sided,   // `op` on window `window`: to or from `peer` (`bytes` at the origin, `target_bytes` at
                 // the target, `recv_bytes` of a result), or its synchronization (`assertion`,
                 // `lock_type`, `group`); window creation, free and fence are collectives
    buffer,      // `op` Buffer_attach (a buffer of `bytes`) or Buffer_detach, for buffered sends
    io,          // MPI-IO or POSIX I/O `op` on file `file` (opened on `comm` as `path`, with `amode`):
                 // `bytes` written or `recv_bytes` read at `offset` (bytes from the view's start), a
                 // seek (`offset`, `whence`), a size (`file_size`) or a view (`view_disp`, `view`)
};

struct ScheduledCall {
    CallKind kind = CallKind::compute;
    Op op{};                      // the MPI function to issue
    int64_t comm = 0;             // this rank's id of the communicator (world 0, self 1)
    Rank peer = -1;               // send: destination, receive: source; world ranks, or kProcNull
    int32_t peer_in_comm = -1;    // the same peer as a rank of `comm` (MPI_PROC_NULL: kProcNull)
    int64_t tag = 0;
    int64_t bytes = 0;            // send, receive; collective: this rank's send side
    Rank source = -1;             // sendrecv: the receive side's peer, as `peer`
    int32_t source_in_comm = -1;
    int64_t recv_tag = 0;
    int64_t recv_bytes = 0;       // sendrecv, collective: the receive side
    int32_t root = -1;            // rooted collective: the root's rank in `comm`
    bool in_place = false;        // collective: this rank passes MPI_IN_PLACE as its send buffer (as
                                  // its receive buffer at the root of a scatter)
    RequestId request = 0;        // the request a non-blocking call creates
    std::vector<RequestId> requests;      // complete
    std::vector<int64_t> send_counts;     // v-collectives: bytes per rank of `comm`, send side
    std::vector<int64_t> recv_counts;     //                and receive side
    int64_t new_comm = 0;                 // create_comm
    std::vector<Rank> members;            // create_comm: world ranks in new-communicator order (the local group)
    Rank remote_leader = -1;              // Intercomm_create, and a split of an intercommunicator: world
                                          // rank of the remote group's first
    bool high = false;                    // Intercomm_merge
    bool own_epoch = false;               // one-sided, drawn outside any epoch of the rank's: issued in
                                          //   one of its own (a shared lock of the target, or lock_all)
    const Topology* topology = nullptr;   // create_comm: the topology the new communicator has (null: none)
    int64_t window = -1;                  // one-sided calls and window collectives: this rank's window id
    int64_t target_bytes = 0;             // one-sided: bytes at the target
    int64_t assertion = 0;                // one-sided synchronization
    int64_t lock_type = 0;                //   (kLockExclusive, kLockShared)
    std::vector<int32_t> group;           // Win_post, Win_start: ranks of the window's communicator
    int64_t file = -1;                    // io: this rank's file id
    std::string path;                     //   File_open, File_delete: the file's name on this rank
    int64_t amode = 0;                    //   File_open (kFileMode* bits)
    int64_t offset = 0;                   //   bytes from the view's displacement
    int64_t whence = 0;                   //   kSeekSet, kSeekCur, kSeekEnd
    int64_t file_size = 0;
    int64_t view_disp = 0;
    // A view's filetype as strided blocks (Role::view_lb ...); blocks 0: bytes from the displacement.
    struct ViewLayout {
        int64_t lb = 0, block = 0, blocks = 0, stride = 0, extent = 0;
        bool operator==(const ViewLayout&) const = default;
    } view;
    double seconds = 0;                   // compute
    const Event* event = nullptr;         // the trace event the call replays (none for the final completion)
    // Whether the computation before the next call counts from this call's return; false where
    // that computation is too short to spin for (replay/compute.hpp), which spares a clock read.
    bool times_return = true;

    // As a blank one, the lists keeping their capacity: replay reuses one call per item (add new
    // fields there too).
    void reset();
    bool operator==(const ScheduledCall&) const = default;
};

enum class ReplayMode : uint8_t { causal, paired };

struct ScheduleOptions {
    ReplayMode mode = ReplayMode::paired;
    bool compute = true;  // false: no compute calls (h-replay --no-compute)
};

// What the generation met that it cannot replay, by recorded operation name (neighbour collectives
// have no recorded topology; calls on communicators the trace never shows being created).
struct ScheduleSummary {
    std::map<std::string, uint64_t> not_replayed;
    uint64_t by_name_only = 0;  // opaque calls: their computation is replayed, the calls are not
    uint64_t unpaired_receives = 0;  // paired mode: receive events no message could be given to
    uint64_t fallback_messages = 0;  // paired mode: messages received where the walk met their send
};

using CallSink = std::function<void(const ScheduledCall&)>;

// Streams the schedule of `rank` to `sink`, in order. The last calls complete every request still
// pending. Every rank of one replay must use the same mode.
ScheduleSummary generate_schedule(const Trace& trace, uint64_t seed, Rank rank, const CallSink& sink,
                                  const ScheduleOptions& options = {});

// Why `rank` cannot replay causally (empty when it can): a point-to-point value or loop count of the
// trace was drawn from a histogram, or a message aimed at `rank` has no receive of `rank` to take it
// (or a receive no message), or a completion or wildcard match was not recorded. Causal replay needs
// every rank to have none. It walks the whole trace once.
std::string causal_replay_obstacle(const Trace& trace, uint64_t seed, Rank rank);

}  // namespace htrace::replay
