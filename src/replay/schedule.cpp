#include "replay/schedule.hpp"

#include "replay/compute.hpp"
#include "replay/rank_stream.hpp"
#include "trace/completion_set.hpp"
#include "trace/render.hpp"

#include <algorithm>
#include <deque>
#include <set>
#include <tuple>

namespace htrace::replay {
namespace {

// How far a receive looks ahead for its completion, in items of its own rank's stream. Beyond it the
// receive is taken as never completed: the items in between are kept in memory meanwhile.
constexpr size_t kLookAheadLimit = size_t{1} << 20;

// Paired replay: messages no receive has taken yet, posted at their send, that a rank keeps waiting
// for no later than its next collective. Beyond this many, the oldest are waited for at once: a flood
// of small messages between collectives otherwise piles up hundreds of thousands of posted receives,
// which MPI matches, and each receive event searches, one by one. Waiting for them earlier keeps
// Theorem 1's premise (a wait lists only messages sent before it, proofs/README.md, P3).
constexpr size_t kMostPostedMessages = 4096;

// A request the traced rank created, as replay mirrors its pending list (trace/completion_set.hpp):
// completions name their requests by position in this list.
struct PendingEntry {
    RequestId request = 0;  // replay's request for it (0: none, e.g. a receive no message was given to)
    bool any_source = false;  // a wildcard receive: the completion that completes it tells what matched
    bool any_tag = false;
};

// The pending list, oldest first, as long as the tracer keeps it.
class PendingList {
public:
    void add(PendingEntry entry)
    {
        if (entries_.size() == PendingRequests<int>::kKept) entries_.pop_front();
        entries_.push_back(entry);
    }

    // The entries a completed set names (newest first), removed from the list, into `taken` (which
    // it replaces), oldest first as the tracer orders matches. Positions that are not pending (a
    // drawn set, a request the list no longer keeps) are left out.
    void take(const std::vector<uint32_t>& positions, std::vector<PendingEntry>& taken)
    {
        taken.clear();
        indices_.clear();
        for (uint32_t p : positions) {
            if (p < entries_.size()) indices_.push_back(entries_.size() - 1 - p);
        }
        std::sort(indices_.begin(), indices_.end());
        indices_.erase(std::unique(indices_.begin(), indices_.end()), indices_.end());
        for (auto it = indices_.rbegin(); it != indices_.rend(); ++it) {
            taken.push_back(entries_[*it]);
            entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(*it));
        }
        std::reverse(taken.begin(), taken.end());
    }

    void take_all(std::vector<PendingEntry>& taken)
    {
        taken.assign(entries_.begin(), entries_.end());
        entries_.clear();
    }

    // The entry at `position` (0: the newest), if it is pending.
    const PendingEntry* at(uint32_t position) const
    {
        return position < entries_.size() ? &entries_[entries_.size() - 1 - position] : nullptr;
    }

    const std::deque<PendingEntry>& entries() const { return entries_; }
    size_t size() const { return entries_.size(); }

private:
    std::deque<PendingEntry> entries_;
    std::vector<size_t> indices_;  // take()'s scratch, kept: replay completes requests call after call
};

// Which positions a completion names, into `positions`; false when the trace does not say (a
// version 1 trace, or a set the tracer could not encode): then it completes everything pending, if
// it completed anything.
bool named_positions(const Completion& completion, size_t pending, std::vector<uint32_t>& positions)
{
    if (!completion.recorded) return false;
    return decode_completed_set(completion.completed_set, static_cast<uint32_t>(std::min<size_t>(pending, 1u << 20)),
                                positions);
}

// How the completion that completes a receive completed it.
struct Match {
    std::optional<int64_t> peer;  // a wildcard's match, relative to the receive's communicator
    std::optional<int64_t> tag;
    bool cancelled = false;       // the rank had cancelled it: no message came
    size_t completion = 0;        // items ahead of the receive
};



// Follows the pending list ahead from the receive that `stream`'s current item posts, to the
// completion that completes it; nullopt if none does within the look-ahead limit.
std::optional<Match> find_completion(RankStream& stream, const PendingList& pending, const Item& receive)
{
    struct Flags {
        bool any_source;
        bool any_tag;
        bool ours;
    };
    // Kept from call to call: paired replay looks for the completion of every receive.
    thread_local std::vector<Flags> mirror;
    thread_local std::vector<uint32_t> positions;
    thread_local std::vector<size_t> indices;
    mirror.clear();
    for (const auto& entry : pending.entries()) mirror.push_back({entry.any_source, entry.any_tag, false});
    mirror.push_back({receive.asked.any_source && !receive.asked.source_known,
                      receive.asked.any_tag && !receive.asked.tag_known, true});
    for (size_t ahead = 1; ahead < kLookAheadLimit; ++ahead) {
        const Item* item = stream.peek(ahead);
        if (item == nullptr) return std::nullopt;
        if (item->creates_request) {
            const bool receives = item->kind == ItemKind::receive;
            mirror.push_back({receives && item->asked.any_source && !item->asked.source_known,
                              receives && item->asked.any_tag && !item->asked.tag_known, false});
            if (mirror.size() > PendingRequests<int>::kKept) mirror.erase(mirror.begin());
        }
        if (item->kind != ItemKind::completion) continue;
        if (!named_positions(item->completion, mirror.size(), positions)) return std::nullopt;
        indices.clear();
        for (uint32_t p : positions) {
            if (p < mirror.size()) indices.push_back(mirror.size() - 1 - p);
        }
        std::sort(indices.begin(), indices.end());
        size_t peers_before = 0;
        size_t tags_before = 0;
        for (size_t index : indices) {
            const Flags& flags = mirror[index];
            if (flags.ours) {
                Match match;
                match.completion = ahead;
                match.cancelled =
                    completed_set_names(item->completion.cancelled_set, static_cast<uint32_t>(mirror.size() - 1 - index));
                const auto& peers = item->completion.matched_peers;
                const auto& tags = item->completion.matched_tags;
                if (flags.any_source && peers_before < peers.size()) match.peer = peers[peers_before];
                if (flags.any_tag && tags_before < tags.size()) match.tag = tags[tags_before];
                return match;
            }
            peers_before += flags.any_source ? 1 : 0;
            tags_before += flags.any_tag ? 1 : 0;
        }
        for (auto it = indices.rbegin(); it != indices.rend(); ++it) mirror.erase(mirror.begin() + static_cast<std::ptrdiff_t>(*it));
        if (std::none_of(mirror.begin(), mirror.end(), [](const Flags& f) { return f.ours; })) return std::nullopt;
    }
    return std::nullopt;
}

// A message aimed at this rank that paired replay has posted a receive for, not yet given to a
// receive event.
struct PostedMessage {
    RequestId request;
    Rank source;
    std::shared_ptr<const std::vector<Rank>> comm;  // which communicator, whatever its id
    int64_t tag;
};

// Blocking sends and receives whose tag was drawn: replayed causally all the same, the receives
// posted with MPI_ANY_TAG, where causal_replay_obstacle() finds a channel of only such calls
// (proofs/README.md, "Drawn tags on blocking channels").
bool tag_blind(Op op) { return op == Op::Send || op == Op::Ssend || op == Op::Recv; }

class ScheduleGenerator {
public:
    ScheduleGenerator(const Trace& trace, uint64_t seed, Rank me, const CallSink& sink, const ScheduleOptions& options)
        : stream_(trace, seed, me, options.mode == ReplayMode::paired), sink_(sink), options_(options)
    {
    }

    ScheduleSummary run()
    {
        while (const Item* item = stream_.peek(0)) {
            // The last call handling this item issues is the one the next computation counts from.
            const Item* next = stream_.peek(1);
            times_return_ = options_.compute && !(next != nullptr && next->kind == ItemKind::compute &&
                                                  next->call.seconds < kShortestSpunComputation);
            handle(*item);
            stream_.pop();
            ++position_;
        }
        complete(Op::Waitall, std::vector<RequestId>(outstanding_), nullptr);
        ScheduleSummary summary = stream_.summary();
        summary.unpaired_receives = unpaired_receives_;
        summary.fallback_messages = fallback_messages_;
        return summary;
    }

private:
    bool causal() const { return options_.mode == ReplayMode::causal; }

    void issue(ScheduledCall& call)
    {
        call.times_return = times_return_;
        sink_(call);
    }

    void handle(const Item& item)
    {
        if (posted_.size() > kMostPostedMessages) complete_oldest_fallbacks(posted_.size() - kMostPostedMessages / 2);
        switch (item.kind) {
        case ItemKind::compute:
            if (options_.compute) sink_(item.call);
            return;
        case ItemKind::send:
        case ItemKind::one_sided:
        case ItemKind::collective:
            if (item.kind == ItemKind::collective && !causal()) complete_fallbacks();
            if (lost_to_cancel(item)) {
                pending_.add({});
                return;
            }
            issue_with_request(item);
            return;
        case ItemKind::io:
            // Collective I/O waits for every rank of the file's communicator, like a collective.
            if (is_collective_io(item.call.op) && !causal()) complete_fallbacks();
            issue_with_request(item);  // MPI_File_iwrite and its kin make one
            return;
        case ItemKind::create_comm:
        case ItemKind::free_comm:
            if (!causal()) complete_fallbacks();
            issue_with_request(item);  // Comm_idup makes one
            return;
        case ItemKind::request_only:
            pending_.add({});
            return;
        case ItemKind::buffer: {
            ScheduledCall call = item.call;
            issue(call);
            return;
        }
        case ItemKind::probe:
            probe(item);
            return;
        case ItemKind::receive:
            if (causal()) {
                causal_receive(item);
            } else {
                paired_receive(item);
            }
            return;
        case ItemKind::sendrecv:
            if (causal()) {
                causal_sendrecv(item);
            } else {
                paired_sendrecv(item);
            }
            return;
        case ItemKind::completion:
            recorded_completion(item);
            return;
        case ItemKind::incoming:
            incoming(item);
            return;
        case ItemKind::withdrawn:
            return;
        }
    }

    // Causal replay takes the probed message where the rank took it; paired replay gives the
    // MPI_Mrecv a message of its own like any receive.
    void probe(const Item& item)
    {
        if (causal() && item.asked.source_known && item.asked.tag_known && !item.asked.source_drawn &&
            !item.asked.tag_drawn) {
            ScheduledCall call = item.call;
            issue(call);
        }
    }

    // A non-blocking send the traced rank's cancel won: no message went.
    bool lost_to_cancel(const Item& item)
    {
        if (item.kind != ItemKind::send || !item.creates_request || !stream_.has_cancellations()) return false;
        const auto match = find_completion(stream_, pending_, item);
        return match && match->cancelled;
    }

    // The stream's call, with a request of replay's own where the traced call made one.
    void issue_with_request(const Item& item)
    {
        ScheduledCall call = item.call;
        if (item.creates_request) {
            call.request = new_request();
            pending_.add({call.request, false, false});
        }
        issue(call);
    }

    RequestId new_request()
    {
        outstanding_.push_back(next_request_);
        return next_request_++;
    }

    // Waits for `requests` that are still outstanding (each once), as `op` did. `requests` must not
    // be outstanding_ itself, which this changes.
    void complete(Op op, const std::vector<RequestId>& requests, const Event* event)
    {
        ScheduledCall& call = completion_call_;  // kept, with its list: replay completes call after call
        call.reset();
        call.kind = CallKind::complete;
        call.op = op;
        call.event = event;
        for (RequestId id : requests) {
            auto found = std::find(outstanding_.begin(), outstanding_.end(), id);
            if (id == 0 || found == outstanding_.end()) continue;
            outstanding_.erase(found);
            call.requests.push_back(id);
        }
        if (!call.requests.empty()) issue(call);
    }

    // ---- Causal: the rank's own receives, where it made them ----------------------------------------

    void causal_receive(const Item& item)
    {
        ScheduledCall call = item.call;
        PendingEntry entry;
        entry.any_source = item.asked.any_source && !item.asked.source_known;
        entry.any_tag = item.asked.any_tag && !item.asked.tag_known;
        bool known = item.asked.source_known && item.asked.tag_known;
        const bool look = item.creates_request && (!known || stream_.has_cancellations());
        const auto match = look ? find_completion(stream_, pending_, item) : std::nullopt;
        if (match && match->cancelled) {
            // The traced rank cancelled it before it matched anything. Replayed, its cancel could
            // lose a race the traced one won and the receive take a message a later receive waits
            // for; left out, it takes none, as in the run.
            pending_.add(entry);
            return;
        }
        if (!known && item.creates_request) {
            // A wildcard MPI_Irecv: what it matched is recorded where it completed.
            const auto source = match && match->peer ? item.asked.comm.world_peer(*match->peer) : std::nullopt;
            if (item.asked.any_source && source) {
                call.peer = *source;
                call.peer_in_comm = *source == kProcNull ? static_cast<int32_t>(kProcNull)
                                                          : rank_in(item.asked.comm, *source);
            }
            if (item.asked.any_tag && match && match->tag) call.tag = *match->tag;
            known = (item.asked.source_known || source.has_value()) &&
                    (item.asked.tag_known || (match && match->tag.has_value()));
        }
        if (!known) {
            // causal_replay_obstacle() rules this out; a receive that cannot be named is left out.
            ++unpaired_receives_;
            entry.request = 0;
            if (item.creates_request) pending_.add(entry);
            return;
        }
        // A drawn tag on a blocking channel (causal_replay_obstacle): the channel's messages in order,
        // which need not be the one the traced receive took, so with room for the largest.
        const bool blind = !item.creates_request && item.asked.tag_drawn && tag_blind(item.call.event->op);
        if (blind) call.tag = kAnyTag;
        if (blind || stream_.message_sizes_drawn()) call.bytes = std::max(call.bytes, stream_.largest_message());
        if (item.creates_request) {
            call.request = new_request();
            entry.request = call.request;
            pending_.add(entry);
        }
        issue(call);
    }

    // Drawn sizes differ between the ends of a message: the receive half takes the largest there is,
    // and Sendrecv_replace, whose one count serves both halves, goes as MPI_Sendrecv.
    void causal_sendrecv(const Item& item)
    {
        ScheduledCall call = item.call;
        if (stream_.message_sizes_drawn()) {
            call.op = Op::Sendrecv;
            call.recv_bytes = std::max(call.recv_bytes, stream_.largest_message());
        }
        issue(call);
    }

    static int32_t rank_in(const CommView& comm, Rank world)
    {
        const auto& members = *comm.members;
        const auto found = std::find(members.begin(), members.end(), world);
        return found == members.end() ? -1 : static_cast<int32_t>(found - members.begin());
    }

    // ---- Paired: messages known from the common seed, given to the rank's receives -------------------

    struct Wanted {
        std::optional<Rank> source;  // exact: only a message from there
        std::optional<int64_t> tag;
        const std::vector<Rank>* comm = nullptr;  // the communicator itself: ids are used again
    };

    static Wanted wanted_by(const Item& item)
    {
        Wanted wanted;
        const bool sendrecv = item.kind == ItemKind::sendrecv;
        wanted.comm = item.asked.comm.members.get();
        if (item.asked.source_known && !item.asked.source_drawn) wanted.source = sendrecv ? item.call.source : item.call.peer;
        if (item.asked.tag_known && !item.asked.tag_drawn) wanted.tag = sendrecv ? item.call.recv_tag : item.call.tag;
        return wanted;
    }

    static bool fits(const Wanted& wanted, const std::vector<Rank>* comm, Rank source, int64_t tag)
    {
        return comm == wanted.comm && (!wanted.source || *wanted.source == source) && (!wanted.tag || *wanted.tag == tag);
    }

    // The earliest message already posted that `wanted` fits, taken off the posted list.
    std::optional<RequestId> take_posted(const Wanted& wanted)
    {
        for (auto it = posted_.begin(); it != posted_.end(); ++it) {
            if (!fits(wanted, it->comm.get(), it->source, it->tag)) continue;
            const RequestId request = it->request;
            posted_.erase(it);
            return request;
        }
        return std::nullopt;
    }

    // A receive from MPI_PROC_NULL pairs with nothing: it is issued as it was.
    bool from_nowhere(const Item& item) const
    {
        return item.asked.source_known && !item.asked.source_drawn && item.call.peer == kProcNull;
    }

    void paired_receive(const Item& item)
    {
        if (from_nowhere(item)) {
            causal_receive(item);
            return;
        }
        const Wanted wanted = wanted_by(item);
        if (!item.creates_request) {  // a blocking receive waits here for a message sent before it
            const auto request = take_posted(wanted);
            if (!request) {
                ++unpaired_receives_;
                return;
            }
            complete(Op::Wait, {*request}, item.call.event);
            return;
        }
        PendingEntry entry;
        entry.any_source = item.asked.any_source && !item.asked.source_known;
        entry.any_tag = item.asked.any_tag && !item.asked.tag_known;
        const auto match = find_completion(stream_, pending_, item);
        if (match && match->cancelled) {
            // The traced rank cancelled it: it takes no message.
        } else if (const auto request = take_posted(wanted)) {
            entry.request = *request;
        } else if (match) {
            // Looking ahead: a message sent before this receive's completion is posted for here.
            for (size_t ahead = 1; ahead < match->completion; ++ahead) {
                const Item* next = stream_.peek(ahead);
                if (next->kind != ItemKind::incoming || next->call.comm == kNoComm || claimed_.count(position_ + ahead) ||
                    !fits(wanted, next->asked.comm.members.get(), next->call.peer, next->call.tag)) {
                    continue;
                }
                claimed_.insert(position_ + ahead);
                ScheduledCall call = next->call;
                call.event = item.call.event;
                call.request = new_request();
                entry.request = call.request;
                issue(call);
                break;
            }
        }
        if (entry.request == 0 && !(match && match->cancelled)) ++unpaired_receives_;
        pending_.add(entry);
    }

    // The send half goes out at once; the receive half takes a message sent before it in the walk.
    void paired_sendrecv(const Item& item)
    {
        ScheduledCall send;
        send.kind = CallKind::send;
        send.op = Op::Isend;
        send.event = item.call.event;
        send.comm = item.call.comm;
        send.peer = item.call.peer;
        send.peer_in_comm = item.call.peer_in_comm;
        send.tag = item.call.tag;
        send.bytes = item.call.bytes;
        send.request = new_request();
        issue(send);
        std::vector<RequestId> both{send.request};
        if (item.asked.source_known && !item.asked.source_drawn && item.call.source == kProcNull) {
            // nothing to receive
        } else if (const auto request = take_posted(wanted_by(item))) {
            both.push_back(*request);
        } else {
            ++unpaired_receives_;
        }
        complete(Op::Waitall, both, item.call.event);
    }

    void incoming(const Item& item)
    {
        if (claimed_.erase(position_) > 0) return;  // a receive event ahead of it posted it already
        if (item.call.comm == kNoComm) return;  // on a communicator this rank freed: nothing to post on
        ScheduledCall call = item.call;
        call.request = new_request();
        posted_.push_back({call.request, call.peer, item.asked.comm.members, call.tag});
        issue(call);
    }

    // The `n` messages posted longest ago that no receive event took (all were sent at earlier items).
    void complete_oldest_fallbacks(size_t n)
    {
        std::vector<RequestId> requests;
        for (size_t k = 0; k < n && !posted_.empty(); ++k) {
            requests.push_back(posted_.front().request);
            posted_.pop_front();
        }
        fallback_messages_ += requests.size();
        complete(Op::Waitall, requests, nullptr);
    }

    // Messages no receive event took are received before the rank's next collective or communicator
    // change, as the paper's replay does.
    void complete_fallbacks()
    {
        if (posted_.empty()) return;
        std::vector<RequestId> requests;
        for (const auto& message : posted_) requests.push_back(message.request);
        fallback_messages_ += posted_.size();
        posted_.clear();
        complete(Op::Waitall, requests, nullptr);
    }

    // ---- Completions: the requests the traced rank completed here --------------------------------------

    void recorded_completion(const Item& item)
    {
        completed_entries_.clear();
        if (named_positions(item.completion, pending_.size(), completed_positions_)) {
            pending_.take(completed_positions_, completed_entries_);
        } else if (item.completion.completed_something) {
            pending_.take_all(completed_entries_);
        }
        completed_requests_.clear();
        for (const auto& entry : completed_entries_) completed_requests_.push_back(entry.request);
        complete(item.call.op, completed_requests_, item.call.event);
    }

    RankStream stream_;
    const CallSink& sink_;
    ScheduleOptions options_;
    bool times_return_ = true;  // for the calls issued while handling the current item
    size_t position_ = 0;  // of the current item in the stream
    PendingList pending_;
    std::vector<RequestId> outstanding_;  // created and not yet completed, oldest first
    std::deque<PostedMessage> posted_;    // paired: posted at their send, given to no receive yet
    std::set<size_t> claimed_;            // paired: positions of messages a receive ahead of them posted
    RequestId next_request_ = 1;
    // Scratch of the completions, kept: replay completes requests call after call.
    std::vector<uint32_t> completed_positions_;
    std::vector<PendingEntry> completed_entries_;
    std::vector<RequestId> completed_requests_;
    ScheduledCall completion_call_;
    uint64_t unpaired_receives_ = 0;
    uint64_t fallback_messages_ = 0;
};

// ---- Whether causal replay is possible -------------------------------------------------------------

bool is_point_to_point(OperationKind kind)
{
    return kind == OperationKind::send || kind == OperationKind::recv || kind == OperationKind::sendrecv ||
           kind == OperationKind::completion || kind == OperationKind::start || kind == OperationKind::request_free;
}

bool holds_point_to_point(const Sequence& seq)
{
    return std::any_of(seq.begin(), seq.end(), [](const Node& node) {
        return node.is_loop() ? holds_point_to_point(node.loop().body)
                              : is_point_to_point(operation_kind(node.event().op));
    });
}

// The first value that causal replay cannot take from the trace: drawn peers, tags, completions or
// matches (sizes may be drawn: receives then take the largest message; tags of blocking sends and
// receives may be drawn, tag_blind), or loop counts around point-to-point calls that each participant
// draws for itself (sender and receiver would iterate differently). A count drawn once for all
// participants may be, where each iteration is closed (causal_replay_obstacle checks that).
std::string drawn_structure(const Sequence& seq)
{
    for (const auto& node : seq) {
        if (node.is_loop()) {
            const Loop& loop = node.loop();
            if (loop.iterations.is_histogram() && !count_drawn_for_all(loop) && holds_point_to_point(loop.body)) {
                return "a loop count around point-to-point calls was drawn from a histogram for each rank alone";
            }
            if (auto why = drawn_structure(loop.body); !why.empty()) return why;
            continue;
        }
        const Event& e = node.event();
        if (!is_point_to_point(operation_kind(e.op))) continue;
        for (const auto& p : e.params) {
            if (!p.value.is_histogram() || p.role == Role::bytes || p.role == Role::recv_bytes ||
                p.role == Role::requests || p.role == Role::completed) {
                continue;
            }
            if ((p.role == Role::tag || p.role == Role::matched_tag) && tag_blind(e.op)) continue;
            return std::string(operation_name(e.op)) + " " + std::string(role_name(p.role)) +
                   " values were drawn from a histogram";
        }
    }
    return {};
}

// Every message aimed at this rank must have a receive of this rank on its channel, and the other
// way round: then the k-th receive on a channel takes the k-th message, as in the traced run.
// Source, communicator (by its members: ids are used again after a free), tag.
using Channel = std::tuple<Rank, const std::vector<Rank>*, int64_t>;

// Where a tag was drawn, a channel is one per source and communicator: its receives all post
// MPI_ANY_TAG and take its messages in order, which holds the order of cause and effect only if
// every send on it is a blocking send and every receive a blocking receive with a drawn tag
// (proofs/README.md, "Drawn tags on blocking channels").
struct BlindChannel {
    int64_t balance = 0;
    bool drawn = false;   // some message or receive on it has a drawn tag
    bool blocking = true; // every message a blocking send, every receive a blocking, drawn-tag receive
};

// An MPI_Irecv counts where it completes: only then is known whether it was cancelled (no
// message) and, for a wildcard, what it matched.
struct WaitingReceive {
    bool any_source, any_tag;
    CommView comm;
    Channel channel;
};

// A loop whose count every participant draws alike may differ from the run in how often it
// iterates; causal replay goes through it only where each iteration is closed on this rank: the
// messages it sends this rank are received, and the requests it makes are completed, within that
// iteration, by nothing older (proofs/README.md, "Counts drawn for all participants").
struct DrawnIteration {
    uint64_t id = 0;    // the walk's shared_draw_iteration; 0 outside such loops
    size_t floor = 0;   // requests pending when it began
    std::map<Channel, int64_t> balance;
};

// One rank's channels as causal_replay_obstacle walks its calls: each take_* returns the first
// obstacle the item shows, or nothing.
class ChannelBalance {
public:
    explicit ChannelBalance(Rank rank) : rank_(rank) {}

    std::string take(const Item& item)
    {
        if (item.shared_draw_iteration != iteration_.id) {
            if (auto why = unclosed_iteration(); !why.empty()) return why;
            iteration_ = DrawnIteration{item.shared_draw_iteration, pending_.size(), {}};
        }
        if (item.kind == ItemKind::incoming) return take_incoming(item);
        std::optional<WaitingReceive> waiting;
        if (auto why = take_receive(item, waiting); !why.empty()) return why;
        if (item.creates_request) hold_request(waiting);
        if (item.kind != ItemKind::completion) return {};
        return take_completion(item);
    }

    std::string unclosed_iteration() const
    {
        if (iteration_.id == 0) return {};
        const std::string what = "rank " + std::to_string(rank_) + ": an iteration of a loop whose count was drawn ";
        if (pending_.size() != iteration_.floor) return what + "leaves requests it made to be completed after it";
        for (const auto& [key, surplus] : iteration_.balance) {
            if (surplus != 0) {
                return what + (surplus > 0 ? "sends this rank messages it receives after it" : "receives messages sent after it") +
                       " (from rank " + std::to_string(std::get<0>(key)) + ", tag " + std::to_string(std::get<2>(key)) + ")";
            }
        }
        return {};
    }

    // At the end of the walk; receives never completed are still posted, and take their messages.
    std::string unbalanced()
    {
        for (const auto& waiting : pending_) {
            if (!waiting) continue;
            if (waiting->any_source || waiting->any_tag) {
                return "rank " + std::to_string(rank_) + ": a wildcard receive that never completed (its match is not in the trace)";
            }
            --balance_[waiting->channel];
        }
        if (auto why = unbalanced_blind_channel(); !why.empty()) return why;
        for (const auto& [key, count] : balance_) {
            if (count == 0) continue;
            const auto& [source, comm, tag] = key;
            if (const auto b = blind_.find({source, comm}); b != blind_.end() && b->second.drawn) continue;
            return "rank " + std::to_string(rank_) + " has " + std::to_string(count > 0 ? count : -count) +
                   (count > 0 ? " messages from rank " + std::to_string(source) + " that none of its receives takes"
                              : " receives from rank " + std::to_string(source) + " that no message reaches") +
                   " (tag " + std::to_string(tag) + ", a communicator of " + std::to_string(comm ? comm->size() : 0) +
                   " ranks)";
        }
        return {};
    }

private:
    Channel channel(Rank source, const CommView& comm, int64_t tag)
    {
        communicators_.insert(comm.members);
        return Channel{source, comm.members.get(), tag};
    }

    BlindChannel& blind_channel(Rank source, const CommView& comm)
    {
        communicators_.insert(comm.members);
        return blind_[{source, comm.members.get()}];
    }

    void count(const Channel& key, int64_t delta)
    {
        balance_[key] += delta;
        if (iteration_.id != 0) iteration_.balance[key] += delta;
    }

    std::string where(const Item& item) const
    {
        const Event& e = *item.call.event;
        return "rank " + std::to_string(rank_) + ", " + std::string(operation_name(e.op)) + " @" +
               render_signature(e.signature);
    }

    std::string drawn_tag_in_iteration() const
    {
        return "rank " + std::to_string(rank_) + ": a tag drawn inside a loop whose count was drawn";
    }

    std::string take_incoming(const Item& item)
    {
        BlindChannel& b = blind_channel(item.call.peer, item.asked.comm);
        const Value* sent_tag = item.call.event->find(Role::tag);
        const bool tag_drawn = sent_tag != nullptr && sent_tag->is_histogram();
        if (tag_drawn && iteration_.id != 0) return drawn_tag_in_iteration();
        b.drawn = b.drawn || tag_drawn;
        b.blocking = b.blocking && tag_blind(item.call.event->op);
        ++b.balance;
        count(channel(item.call.peer, item.asked.comm, item.call.tag), 1);
        return {};
    }

    // A blocking receive counts now; one that makes a request is left `waiting` for its completion.
    std::string take_receive(const Item& item, std::optional<WaitingReceive>& waiting)
    {
        const bool receives = item.kind == ItemKind::receive || item.kind == ItemKind::sendrecv;
        const bool sendrecv = item.kind == ItemKind::sendrecv;
        const Rank source = sendrecv ? item.call.source : item.call.peer;
        const int64_t tag = sendrecv ? item.call.recv_tag : item.call.tag;
        const bool from_nowhere = item.asked.source_known && source == kProcNull;
        if (!receives || from_nowhere) return {};
        if (item.asked.source_known) {
            BlindChannel& b = blind_channel(source, item.asked.comm);
            const bool blind_receive = !item.creates_request && !sendrecv && tag_blind(item.call.event->op) &&
                                       item.asked.tag_drawn;
            if (item.asked.tag_drawn && iteration_.id != 0) return drawn_tag_in_iteration();
            b.drawn = b.drawn || item.asked.tag_drawn;
            b.blocking = b.blocking && blind_receive;
            --b.balance;
        }
        if (item.creates_request) {
            waiting = WaitingReceive{item.asked.any_source && !item.asked.source_known,
                                     item.asked.any_tag && !item.asked.tag_known, item.asked.comm,
                                     channel(source, item.asked.comm, tag)};
        } else if (item.asked.source_known && item.asked.tag_known) {
            count(channel(source, item.asked.comm, tag), -1);
        } else {
            return where(item) + ": what a wildcard receive matched is not in the trace";
        }
        return {};
    }

    void hold_request(const std::optional<WaitingReceive>& waiting)
    {
        if (pending_.size() == PendingRequests<int>::kKept) {
            pending_.pop_front();
            if (iteration_.floor > 0) --iteration_.floor;
        }
        pending_.push_back(waiting);
    }

    std::string take_completion(const Item& item)
    {
        if (!item.completion.recorded) {
            return "the trace does not say which requests its completion calls completed (an older trace format)";
        }
        if (!named_positions(item.completion, pending_.size(), positions_)) {
            return where(item) + ": a completion whose requests the tracer could not record";
        }
        std::vector<size_t> indices;
        for (uint32_t p : positions_) {
            if (p >= pending_.size()) return where(item) + ": completes a request the rank does not have";
            if (iteration_.id != 0 && pending_.size() - 1 - p < iteration_.floor) {
                return where(item) + ": completes, in an iteration of a loop whose count was drawn, a request made before it";
            }
            indices.push_back(pending_.size() - 1 - p);
        }
        std::sort(indices.begin(), indices.end());
        if (auto why = count_completed_receives(item, indices); !why.empty()) return why;
        for (auto it = indices.rbegin(); it != indices.rend(); ++it) pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(*it));
        return {};
    }

    // A cancelled receive took no message; a wildcard's channel is the one the completion names.
    std::string count_completed_receives(const Item& item, const std::vector<size_t>& indices)
    {
        size_t peers = 0;
        size_t tags = 0;
        for (size_t index : indices) {
            if (!pending_[index]) continue;
            WaitingReceive& w = *pending_[index];
            if (completed_set_names(item.completion.cancelled_set, static_cast<uint32_t>(pending_.size() - 1 - index))) {
                continue;
            }
            auto& [channel_source, comm, channel_tag] = w.channel;
            if (w.any_source) {
                const auto& matched = item.completion.matched_peers;
                const auto world = peers < matched.size() ? w.comm.world_peer(matched[peers++]) : std::nullopt;
                if (!world) return where(item) + ": what a wildcard receive matched is not in the trace";
                channel_source = *world;
            }
            if (w.any_tag) {
                const auto& matched = item.completion.matched_tags;
                if (tags >= matched.size()) return where(item) + ": what a wildcard receive matched is not in the trace";
                channel_tag = matched[tags++];
            }
            count(w.channel, -1);
        }
        return {};
    }

    std::string unbalanced_blind_channel() const
    {
        for (const auto& [key, b] : blind_) {
            if (!b.drawn) continue;
            const auto& [source, comm] = key;
            const std::string what = "rank " + std::to_string(rank_) + ": tags drawn on its channel from rank " +
                                     std::to_string(source) + " (a communicator of " +
                                     std::to_string(comm ? comm->size() : 0) + " ranks)";
            if (!b.blocking) return what + " that not only blocking sends and receives use";
            if (b.balance != 0) return what + ", whose messages and receives do not balance";
        }
        return {};
    }

    Rank rank_;
    std::map<Channel, int64_t> balance_;
    std::map<std::pair<Rank, const std::vector<Rank>*>, BlindChannel> blind_;
    std::set<std::shared_ptr<const std::vector<Rank>>> communicators_;  // keeps the keys' members alive
    std::deque<std::optional<WaitingReceive>> pending_;
    std::vector<uint32_t> positions_;
    DrawnIteration iteration_;
};

// The causal argument replays the run's collectives; one the merge left apart is skipped, and a
// rank could wait where the run's collective ordered things otherwise.
std::string collectives_not_as_run(const RankStream& stream, Rank rank)
{
    if (const uint64_t apart = stream.collectives_left_apart(); apart > 0) {
        return "rank " + std::to_string(rank) + ": " + std::to_string(apart) +
               " collective calls the merge left apart from other members of their communicator are not replayed";
    }
    if (const uint64_t joined = stream.collectives_joined(); joined > 0) {
        return "rank " + std::to_string(rank) + ": " + std::to_string(joined) +
               " collective instances the merge left in parts are issued where their last part is";
    }
    return {};
}

}  // namespace

void ScheduledCall::reset()
{
    kind = CallKind::compute;
    op = Op{};
    comm = 0;
    peer = -1;
    peer_in_comm = -1;
    tag = 0;
    bytes = 0;
    source = -1;
    source_in_comm = -1;
    recv_tag = 0;
    recv_bytes = 0;
    root = -1;
    in_place = false;
    request = 0;
    requests.clear();
    send_counts.clear();
    recv_counts.clear();
    new_comm = 0;
    members.clear();
    remote_leader = -1;
    high = false;
    topology = nullptr;
    window = -1;
    target_bytes = 0;
    assertion = 0;
    lock_type = 0;
    group.clear();
    own_epoch = false;
    file = -1;
    path.clear();
    amode = 0;
    offset = 0;
    whence = 0;
    file_size = 0;
    view_disp = 0;
    view = {};
    seconds = 0;
    event = nullptr;
    times_return = true;
}

ScheduleSummary generate_schedule(const Trace& trace, uint64_t seed, Rank rank, const CallSink& sink,
                                  const ScheduleOptions& options)
{
    return ScheduleGenerator(trace, seed, rank, sink, options).run();
}

std::string causal_replay_obstacle(const Trace& trace, uint64_t seed, Rank rank)
{
    if (auto why = drawn_structure(trace.body); !why.empty()) return why;
    RankStream stream(trace, seed, rank, true);
    ChannelBalance channels(rank);
    for (const Item* item; (item = stream.peek(0)) != nullptr; stream.pop()) {
        if (auto why = channels.take(*item); !why.empty()) return why;
    }
    if (auto why = channels.unclosed_iteration(); !why.empty()) return why;
    if (auto why = collectives_not_as_run(stream, rank); !why.empty()) return why;
    return channels.unbalanced();
}

}  // namespace htrace::replay
