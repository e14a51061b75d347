#pragma once
// One walk of a compressed trace, in trace order, for every participant of every event: what
// h-dump --calls counts, what tests compare with, and what replay interprets. It never expands the
// trace into per-rank lists: loops are iterated where they stand.

#include "trace/event.hpp"

#include "histogram/sampler.hpp"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace htrace {

// Who is in which communicator, rebuilt from the communicator creations met so far: for each world
// rank, its communicator ids and their members (world ranks, in communicator rank order). An
// intercommunicator also has a remote group, the one its point-to-point peers and roots are ranks of.
class CommunicatorTable {
public:
    explicit CommunicatorTable(int32_t world_size);

    // The members of communicator `comm` as seen by world rank `rank` (an intercommunicator's local
    // group); nullptr if unknown.
    const std::vector<Rank>* members(Rank rank, int64_t comm) const;
    // The same, to keep after the communicator is freed.
    std::shared_ptr<const std::vector<Rank>> shared_members(Rank rank, int64_t comm) const;
    // An intercommunicator's remote group; nullptr for other communicators (or one not paired yet).
    const std::vector<Rank>* remote_members(Rank rank, int64_t comm) const;
    // The group the peers of `comm` are ranks of: the remote group of an intercommunicator, else the
    // members.
    std::shared_ptr<const std::vector<Rank>> shared_peer_group(Rank rank, int64_t comm) const;

    // The world rank a relative peer of `caller` in `comm` stands for; nullopt for symbolic peers
    // or unknown communicators.
    std::optional<Rank> world_peer(Rank caller, int64_t comm, int64_t relative) const;
    // The world rank of rank `index` of `comm`'s peer group, as seen by `caller` (roots are stored that way).
    std::optional<Rank> world_rank(Rank caller, int64_t comm, int64_t index) const;
    // The rank of world rank `member` in `comm` as seen by `caller` (in the remote group of an
    // intercommunicator where it is not in the caller's); nullopt if not a member.
    std::optional<int32_t> rank_in(Rank caller, int64_t comm, Rank member) const;
    // Ids are per process: the id under which `rank` knows the communicator `other` calls `other_comm`.
    std::optional<int64_t> local_id(Rank rank, Rank other, int64_t other_comm) const;

    // One instance of a creation event: every participant's color and key are known.
    void create(const Event& creation, const std::vector<Rank>& participants);
    void free(const Event& release, const std::vector<Rank>& participants);

private:
    using Members = std::shared_ptr<const std::vector<Rank>>;
    using Comms = std::map<int64_t, Members>;
    const Members* find(Rank rank, int64_t comm) const;
    const Members* find_remote(Rank rank, int64_t comm) const;
    bool in_world(Rank rank) const { return rank >= 0 && rank < world_size_; }
    // The rank's communicators as they start (the world and itself), or as the trace changed them.
    const Comms* changed(Rank rank) const;
    Comms& comms_to_change(Rank rank);
    Comms& remote_comms_to_change(Rank rank);
    const Members& self(Rank rank) const;
    void pair_groups(const Event& creation, const std::map<int64_t, Members>& groups);

    // Every rank starts with the world (0) and itself (1). Each replaying rank walks the whole trace
    // with a table of its own, so a map of those two per rank made every rank's table grow with the
    // rank count, and a simulation of N ranks hold N x N entries (5 GB at 4096 ranks). So the two
    // are implicit: a rank gets a map of its own (starting with them) only when the trace creates,
    // frees or pairs one of its communicators, and its self group only when asked for (a cache: a
    // rank's walk is never shared between threads).
    int32_t world_size_ = 0;
    Members world_;
    mutable std::map<Rank, Members> selves_;
    std::vector<std::unique_ptr<Comms>> by_rank_;         // empty, or one entry per world rank
    std::vector<std::unique_ptr<Comms>> remote_by_rank_;  // the same
    // One group of an intercommunicator whose other group has not been created yet, by its leader.
    struct OpenGroup {
        Members members;
        int64_t remote_leader;
        std::vector<std::pair<Rank, int64_t>> ids;  // (member, its id of the intercommunicator)
    };
    std::map<int64_t, OpenGroup> open_groups_;
};

// Where a drawn value comes from, the same on every rank, for HistogramSampler::draw: a role of an
// event, or the count of a loop (told apart by the first event inside it and how deeply it nests).
uint64_t draw_site(const Event& event, Role role);
uint64_t draw_site(const Loop& loop);

// How many iterations of a loop with these counts run in full (Loop::last_leaves_out) on average:
// one fewer than the count, where it runs at all (a wide bin from 0 is taken at its mean).
double iterations_but_last(const Histogram& counts);

// Whether replay draws a loop's count once per instance for all its participants: where its count is
// a histogram alike on every rank, or where its body holds collectives or communicator changes (whose
// instances must meet); otherwise each participant draws its own.
bool count_drawn_for_all(const Loop& loop);

// One event instance as the walk meets it: the event, its participants that are active there
// (ascending world ranks), and how many calls the visit stands for (1, except inside a loop whose
// count is a histogram when the walk does not draw: its body is visited once, standing for the
// expected number of iterations).
struct EventInstance {
    const Event* event = nullptr;
    const std::vector<Rank>* participants = nullptr;
    double weight = 1;
    // 0 outside every loop whose count was drawn for all participants (count_drawn_for_all); inside,
    // a number of its own for each iteration of the innermost such loop (and for the rest of an outer
    // one's iteration after an inner one ends): causal replay checks that each iteration is closed.
    uint64_t shared_draw_iteration = 0;
    // How many visits of the full walk this one stands for: the product of the counts of the loops
    // the walk visited once (WalkCursor's fold_exact_loops; 1 otherwise), up to UINT64_MAX. Kept
    // apart from `weight` so that counts stay exact integers beyond 2^53.
    uint64_t repeats = 1;
};

// The walk as a cursor: each next() gives the following instance, so a reader can stop, keep what it
// needs and go on later (replay looks ahead this way). Loops are iterated where they stand.
//
// Without a sampler, a loop whose count is a histogram is visited once (see EventInstance::weight).
// With one (replay), its count is drawn when an instance of it starts: one count for all its
// participants where count_drawn_for_all says so (a count alike on every rank, or a body with
// collectives or communicator changes, whose instances must meet); otherwise one count per
// participant, in rank order, so that ranks iterate as differently as they did when traced.
class WalkCursor {
public:
    WalkCursor(const Trace& trace, HistogramSampler* draws);
    // For readers that only count (h-dump --calls, --matrix): with `fold_exact_loops`, a loop whose
    // count is exact or per rank and whose body creates or frees no communicator (so that every
    // iteration meets the same communicators) is visited once for each count its ranks have (up to
    // 64 different counts), standing for that count (EventInstance::repeats): the walk costs the
    // trace's size, not the calls it stands for. Instances come in another order than the full walk's.
    WalkCursor(const Trace& trace, HistogramSampler* draws, bool fold_exact_loops);
    // The next instance, or nullopt at the end. The communicator table already knows a communicator
    // the instance creates, and still knows one it frees until the following call.
    std::optional<EventInstance> next();
    const CommunicatorTable& communicators() const { return communicators_; }

private:
    // One sequence being walked: the trace's body, or a loop's body in one of its iterations.
    struct Frame {
        const Sequence* sequence = nullptr;
        size_t position = 0;
        std::vector<char> active;  // the ranks that take part in this pass, by world rank
        double weight = 1;
        const Loop* loop = nullptr;  // the loop this frame iterates; null for the trace's body
        int64_t iteration = 0;
        int64_t iterations = 1;
        std::vector<int64_t> counts;       // per-rank counts; empty when every active rank runs `iterations`
        std::vector<char> loop_active;     // with per-rank counts: who took part when the loop started
        bool count_shared = false;         // its count was drawn once for all participants
        bool past_cut = false;             // this pass is past where a last iteration stops (Loop)
        uint64_t repeats = 1;              // see EventInstance::repeats
        uint64_t folded_count = 0;         // a loop visited once for this count (fold_exact_loops)
    };

    void enter(const Loop& loop, const Frame& outer);
    bool fold(const Loop& loop, const Frame& base);
    bool active_in(const Loop& loop, const std::vector<char>& active);
    void restrict_to_iteration(Frame& frame);
    bool leave_out_rest(Frame& frame);
    const std::vector<Rank>& participants_of(const Loop& loop);
    bool count_shared(const Loop& loop);
    void next_shared_iteration(int frames);
    void collect(const Event& event, const std::vector<char>& active);

    const Trace& trace_;
    HistogramSampler* draws_;
    bool fold_exact_loops_ = false;
    std::vector<Frame> stack_;
    std::map<const Loop*, std::vector<Rank>> loop_participants_;
    std::map<const Loop*, bool> loop_count_shared_;
    int shared_count_frames_ = 0;        // frames on the stack whose count was drawn for all participants
    uint64_t shared_draw_iteration_ = 0; // see EventInstance
    CommunicatorTable communicators_;
    std::vector<Rank> participants_;
    const Event* to_free_ = nullptr;  // a comm_free met last: its communicator goes at the next step
};

// The whole walk at once, for readers that visit every instance or every call.
class TraceWalker {
public:
    // `on_call` sees each call: the event and the world rank making it, in trace order, and how many
    // calls the visit stands for (EventInstance::weight).
    using CallVisitor = std::function<void(const Event&, Rank, const CommunicatorTable&, double weight)>;
    // `on_event` sees each instance of an event once, with its participants (ascending world ranks).
    using EventVisitor =
        std::function<void(const Event&, const std::vector<Rank>& participants, const CommunicatorTable&)>;

    TraceWalker(const Trace& trace, CallVisitor on_call);
    // A walk that draws loop counts from `draws` (see WalkCursor).
    TraceWalker(const Trace& trace, EventVisitor on_event, HistogramSampler& draws);
    void run();

private:
    const Trace& trace_;
    CallVisitor on_call_;
    EventVisitor on_event_;
    HistogramSampler* draws_ = nullptr;
};

}  // namespace htrace
