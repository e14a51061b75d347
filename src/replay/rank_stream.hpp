#pragma once
// The first half of schedule generation: the walk of the whole trace, with every histogram value of
// every participant drawn in the same order on every rank, reduced to what one rank's replay meets,
// one item at a time: its own calls, with their values resolved to world ranks and communicator
// ranks, and, when asked for, each message that another rank's send aims at it. The second half
// (schedule.cpp) reads these items, with look-ahead, and decides when to post and complete.
//
// Items come in walk order, and within one event instance in the order of the proofs' labels
// (proofs/README.md): the compute delay, then per participant its send (a message aimed at this
// rank before this rank's own send, for a send to itself), then this rank's other calls.

#include "replay/schedule.hpp"
#include "trace/walk.hpp"

#include "histogram/sampler.hpp"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace htrace::replay {

enum class ItemKind : uint8_t {
    compute,      // call: compute
    send,         // call: the send (blocking, or creating a request)
    receive,      // call: the receive as recorded (Recv, or Irecv creating a request; Mrecv, Imrecv and
                  // started persistent receives as those); see Asked
    probe,        // call: a matched probe that took a message (MPI_Mprobe, or an MPI_Improbe that found one)
    sendrecv,     // call: both halves; see Asked for the receive half
    completion,   // see Completion (MPI_Request_free too)
    collective,   // call: the collective, ready (creating a request if non-blocking)
    create_comm,  // call: the creation, ready
    free_comm,    // call: the free, ready
    request_only, // a call that created a request but is not replayed (the request stays empty)
    incoming,     // call: a send another rank (or this one) aims at this rank, as that rank issues it
    withdrawn,    // an incoming message whose send the sender cancelled (its cancel won): nothing to do
    one_sided,    // call: a one-sided call, ready (creating a request for Rput and its kin)
    io,           // call: an MPI-IO call, ready
    buffer,       // call: attaching or detaching the buffer of buffered sends, ready
};

// A communicator as one rank knows it, to turn a relative peer into a world rank later. The members
// also tell communicators apart where a freed one's id is used again: each creation has its own.
struct CommView {
    std::shared_ptr<const std::vector<Rank>> members;
    int32_t my_rank = -1;

    std::optional<Rank> world_peer(int64_t relative) const;
    bool operator==(const CommView&) const = default;
};

// The receive a rank made: what it asked for, and what is known of what matched.
struct Asked {
    bool any_source = false;   // MPI_ANY_SOURCE: the source is what matched (`source_known` once known)
    bool any_tag = false;      // MPI_ANY_TAG: likewise for the tag
    bool source_known = false; // call.peer / call.source holds the source (world rank or kProcNull)
    bool tag_known = false;    // call.tag / call.recv_tag holds the tag
    bool source_drawn = false; // ... drawn from a histogram, not the rank's own
    bool tag_drawn = false;
    CommView comm;
    bool operator==(const Asked&) const = default;
};

// A completion call: which of the rank's pending requests it completed. MPI_Request_free names the
// requests it freed the same way: they leave the pending list without a wait there (one still
// active completes unseen: replay waits for it at the end).
struct Completion {
    bool frees = false;                    // MPI_Request_free
    bool recorded = false;                 // false: completed_set not recorded (a version 1 trace)
    std::vector<int64_t> completed_set;    // the values of its completed_set parameters
    std::vector<int64_t> cancelled_set;    // which of them the rank had cancelled
    bool completed_something = true;       // without completed_set: whether it completed anything
    std::vector<int64_t> matched_peers;    // what its wildcard receives matched, oldest request first
    std::vector<int64_t> matched_tags;     //   (relative to each receive's communicator)

    void reset();  // as a blank one, the lists keeping their capacity (add new fields there too)
    bool operator==(const Completion&) const = default;
};

struct Item {
    ItemKind kind = ItemKind::compute;
    ScheduledCall call;            // what to issue, requests left for the second half to number
    bool creates_request = false;  // the traced call created a request (it has a place in the pending list)
    Asked asked;                   // receive, sendrecv; incoming: asked.comm is the message's communicator
    Completion completion;         // completion
    uint64_t shared_draw_iteration = 0;  // the walk's (EventInstance): where causal replay checks closure

    void reset();  // as a blank one, the lists keeping their capacity (add new fields there too)
    bool operator==(const Item&) const = default;
};

// The items kept ahead of the replay, oldest first. Each slot's item is allocated once and reused for
// every item the walk puts there, keeping the capacity of its lists, so that replaying a long run of
// calls allocates nothing per call; an item stays where it is while the queue grows.
class ItemQueue {
public:
    Item& push_back();  // an item as default-constructed
    void pop_front();
    void pop_back();
    Item& operator[](size_t i) { return *slots_[(head_ + i) & (slots_.size() - 1)]; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    std::vector<std::unique_ptr<Item>> slots_;  // a power of two of them
    size_t head_ = 0;
    size_t size_ = 0;
};

// The second half's view of the walk: items one at a time, and any number ahead of the current one.
class RankStream {
public:
    // `incoming`: also produce the messages aimed at `rank` (paired replay and the causal check).
    RankStream(const Trace& trace, uint64_t seed, Rank rank, bool incoming);

    // The item `ahead` places after the current one (0: the current one), nullptr past the end.
    const Item* peek(size_t ahead);
    // Drops the current item: the next one becomes current.
    void pop();
    // How far the walk has gone beyond the current item, in items kept.
    size_t kept() const { return items_.size(); }

    // What could not be replayed, counted as the walk went.
    ScheduleSummary& summary() { return summary_; }

    // Trace-wide facts the second half needs, computed before the walk.
    int64_t largest_message() const { return largest_message_; }  // bytes, histogram maxima included
    bool message_sizes_drawn() const { return message_sizes_drawn_; }
    bool has_cancellations() const { return has_cancellations_; }  // any completion cancelled a request
    // Collective instances of this rank the merge left apart (some member of the communicator does
    // not take part): not replayed, so the run's collectives are not all there.
    uint64_t collectives_left_apart() const { return collectives_left_apart_; }
    // Instances of this rank made of parts the merge left apart, issued where their last part was met
    // (join_parts): replayed in walk order, not in the rank's own.
    uint64_t collectives_joined() const { return collectives_joined_; }
    // How many parts of one member a collective instance in parts holds at most, waiting for the other
    // members' parts; beyond it, the oldest is left out.
    static constexpr size_t kMaxPartsWaiting = 4096;

    // A cancelled send's message is withdrawn where the sender's completion says so: the items from
    // its send on are kept until then, up to this many beyond the one asked for.
    static constexpr size_t kWithdrawWindow = 4096;

private:
    bool produce();  // walks on until at least one more item is kept; false at the end
    void on_instance(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms);
    void draw_all(const Event& e, const std::vector<Rank>& participants);
    std::optional<int64_t> value(size_t participant, size_t param) const;
    std::optional<int64_t> value(size_t participant, Role role) const;
    bool drawn(Role role) const;

    void sends(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms);
    bool world_senders(const Event& e, const std::vector<Rank>& participants);
    void send_of(const Event& e, const std::vector<Rank>& participants, size_t i, const CommunicatorTable& comms);
    Item* receive(const Event& e, const CommunicatorTable& comms, size_t me);
    void matched_probe(const Event& e, const CommunicatorTable& comms, size_t me);
    void completion(const Event& e, size_t me);
    void collective(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms, size_t me);
    bool replays_collective(Op op, const std::vector<Rank>& participants, const std::vector<Rank>* members,
                            const std::vector<Rank>* remote);
    bool join_parts(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms);
    void finish_waiting_parts();
    struct Part;
    void add_joined(const Event& e, int64_t comm, const Part& first);
    void vector_counts(Op op, const std::vector<Rank>& participants, const std::vector<Rank>& members,
                       const std::vector<Rank>* remote, ScheduledCall& call);
    bool neighbour_counts(Op op, const std::vector<Rank>& participants, const std::vector<Rank>& members,
                          ScheduledCall& call);
    const Topology* topology(int64_t key);
    void keep_topologies(const std::vector<Rank>& participants, const CommunicatorTable& comms,
                         int64_t made);
    void create(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms, size_t me);
    void create_across(const Event& e, const CommunicatorTable& comms, size_t me, int64_t parent, int64_t made);
    void release(const Event& e, const CommunicatorTable& comms, size_t me);
    void withdraw_cancelled(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms);
    // One-sided communication (one_sided.cpp).
    void window_collective(const Event& e, const std::vector<Rank>& participants, const CommunicatorTable& comms,
                           size_t me);
    void one_sided(const Event& e, size_t me);
    // MPI-IO (io_stream.cpp).
    void io(const Event& e, size_t me);
    void buffer(const Event& e, size_t me);
    void not_replayed(const Event& e, bool creates_request);
    Item& add(ItemKind kind, const Event& e);

    const Trace& trace_;
    Rank me_;
    bool incoming_;
    HistogramSampler draws_;
    WalkCursor cursor_;
    ItemQueue items_;  // the current item first
    const Event* event_ = nullptr;
    const std::vector<Rank>* participants_ = nullptr;
    uint64_t shared_draw_iteration_ = 0;  // the current instance's
    std::vector<std::optional<int64_t>> drawn_;  // per participant, per parameter of event_
    std::vector<size_t> senders_;
    ScheduleSummary summary_;
    int64_t largest_message_ = 0;
    bool message_sizes_drawn_ = false;
    bool has_cancellations_ = false;
    bool has_cancelled_sends_ = false;
    bool as_run_ = false;  // the trace is lossless, or nothing in it was drawn
    uint64_t collectives_left_apart_ = 0;
    uint64_t collectives_joined_ = 0;
    // Parts of collective instances waiting for the other members' (join_parts), by communicator (its
    // members, kept alive so that the address stays theirs) and operation.
    struct Part {
        const Event* event;
        int64_t comm;  // the member's id of the communicator
        int64_t bytes;
        int64_t recv_bytes;
        int64_t root;
    };
    struct WaitingParts {
        std::shared_ptr<const std::vector<Rank>> members;
        std::map<Rank, std::deque<Part>> of_member;
    };
    std::map<std::pair<const std::vector<Rank>*, Op>, WaitingParts> waiting_parts_;
    bool walk_ended_ = false;
    // This rank's windows: its communicator, as at the creation, and the targets its epochs open.
    struct Window {
        CommView comm;
        std::vector<int32_t> locked;   // Win_lock's targets not unlocked yet (a target once per lock)
        bool locked_all = false;       // in a Win_lock_all epoch
        std::vector<int32_t> started;  // Win_start's group, until Win_complete
        bool fenced = false;           // a Win_fence opened an active-target epoch
    };
    std::map<int64_t, Window> windows_;
    // The header's topologies, parsed when first used (null: damaged), and for each communicator with
    // one, each member's (by its rank in the communicator), for neighbourhood collectives.
    std::map<int64_t, std::optional<Topology>> topologies_;
    struct CommTopologies {
        std::shared_ptr<const std::vector<Rank>> members;  // kept alive: its address is the key
        std::vector<const Topology*> of_member;
    };
    std::map<const std::vector<Rank>*, CommTopologies> comm_topologies_;
    int64_t largest_target_ = 0;           // bytes: what a replayed dynamic window attaches
    bool target_sizes_drawn_ = false;      // some one-sided access's size was drawn from a histogram
    void keep_target_in_epoch(const Event& e, Window& window, ScheduledCall& call);
};

}  // namespace htrace::replay
