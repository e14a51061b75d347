#include "merge/collective_instances.hpp"

#include "trace/hash.hpp"

#include <algorithm>

namespace htrace {
namespace {

uint64_t mix(uint64_t h, int64_t v) { return mix64(h ^ mix64(static_cast<uint64_t>(v) + 0x9e3779b97f4a7c15ull)); }

// Where streams come from: each kind its own, so that no two kinds of identity meet by chance.
constexpr uint64_t kWorld = 0x77'6f'72'6c'64ull;  // "world"
constexpr uint64_t kSelf = 0x73'65'6c'66ull;
constexpr uint64_t kUnknown = 0x75'6e'6b'6eull;   // an id made before the sequence, or inside a loop
constexpr int64_t kMadeBySplit = 1, kMadeForGroup = 2, kMadeAcross = 3, kWindowMade = 4, kFileOpened = 5;

bool is_window_creation(Op op) { return is_window_collective(op) && op != Op::Win_fence && op != Op::Win_free; }

std::optional<int64_t> value_of(const Event& e, Role role, Rank rank)
{
    const Value* v = e.find(role);
    return v == nullptr ? std::nullopt : v->value_for(rank);
}

}  // namespace

uint64_t StreamTracker::communicator(Rank rank, int64_t id) const
{
    if (id == kWorldComm) return kWorld;
    if (id == 1) {
        const uint64_t self = mix(kSelf, rank);
        births_.try_emplace(self, kSelf);  // every rank's own: one family, like the colours of a split
        return self;
    }
    if (const auto found = ranks_.find(rank); found != ranks_.end()) {
        if (const auto c = found->second.comms.find(id); c != found->second.comms.end()) return c->second;
    }
    return unknown(id);
}

uint64_t StreamTracker::unknown(int64_t id) const
{
    const uint64_t stream = mix(kUnknown, id);
    unknown_.insert(stream);
    return stream;
}

std::optional<uint64_t> StreamTracker::birth(uint64_t stream) const
{
    const auto found = births_.find(stream);
    if (found != births_.end()) return found->second;
    // Made before the sequence: one communicator under different ids, or colours of one split, or
    // neither; what its instances may meet is left to their places.
    if (unknown_.count(stream)) return kUnknown;
    return std::nullopt;
}

const std::vector<Rank>* StreamTracker::members(uint64_t stream) const
{
    const auto found = members_.find(stream);
    return found == members_.end() ? nullptr : &found->second;
}

int64_t StreamTracker::take_instance(RankState& s, uint64_t stream)
{
    int64_t& next = s.next[stream];
    if (next < 0) return -1;
    return next++;
}

int64_t StreamTracker::take_place(std::vector<Place>& places, RankState& s, uint64_t stream)
{
    places.push_back({stream, take_instance(s, stream)});
    return places.back().instance;
}

uint64_t StreamTracker::id_stream(const std::map<int64_t, uint64_t>& ids, int64_t id) const
{
    const auto found = ids.find(id);
    return found != ids.end() ? found->second : unknown(id);
}

std::vector<StreamTracker::Place> StreamTracker::take_part(const Event& e, Rank rank)
{
    std::vector<Place> places;
    const OperationKind kind = operation_kind(e.op);
    if (kind != OperationKind::comm_free && !is_collective_or_creation(e.op)) return places;
    RankState& s = state(rank);
    const auto comm = value_of(e, Role::comm, rank);
    if (kind == OperationKind::comm_free) {
        if (comm) s.comms.erase(*comm);
        return places;
    }
    const uint64_t parent = comm ? communicator(rank, *comm) : unknown(kNoComm);
    if (is_window_creation(e.op) || e.op == Op::File_open) {
        take_opening(places, s, e, rank, parent);
    } else if (e.op == Op::Win_fence || e.op == Op::Win_free) {
        take_on_handle(places, s, s.windows, value_of(e, Role::window, rank), e.op == Op::Win_free);
    } else if (kind == OperationKind::io) {  // collective I/O on an open file
        take_on_handle(places, s, s.files, value_of(e, Role::file, rank), e.op == Op::File_close);
    } else if (kind == OperationKind::comm_create) {
        take_creation(places, s, e, rank, parent);
    } else {
        take_place(places, s, parent);
    }
    return places;
}

// A window or file is made by a collective on its communicator, and orders its own from then on.
void StreamTracker::take_opening(std::vector<Place>& places, RankState& s, const Event& e, Rank rank, uint64_t parent)
{
    const int64_t k = take_place(places, s, parent);
    const bool window = e.op != Op::File_open;
    const auto id = value_of(e, window ? Role::window : Role::file, rank);
    if (!id || *id < 0) return;
    const int64_t made_how = window ? kWindowMade : kFileOpened;
    const uint64_t made = mix(mix(parent, k), made_how);
    if (k >= 0) births_[made] = mix(mix(birth(parent).value_or(parent), k), made_how);
    (window ? s.windows : s.files)[*id] = made;
    s.made.emplace_back(window ? 'w' : 'f', *id);
    take_place(places, s, made);
}

// A window's or open file's collectives order their own stream; the one that frees it forgets its id.
void StreamTracker::take_on_handle(std::vector<Place>& places, RankState& s, std::map<int64_t, uint64_t>& ids,
                                   std::optional<int64_t> id, bool frees)
{
    if (!id) return;
    take_place(places, s, id_stream(ids, *id));
    if (frees) ids.erase(*id);
}

// A creation is one instance on its parent (but MPI_Comm_create_group, which only members call),
// and the communicator it made starts a stream of its own, named as the header says.
void StreamTracker::take_creation(std::vector<Place>& places, RankState& s, const Event& e, Rank rank, uint64_t parent)
{
    const auto colour = value_of(e, Role::color, rank).value_or(kNoComm);
    const auto made_id = value_of(e, Role::new_comm, rank).value_or(kNoComm);
    const auto remote_leader = value_of(e, Role::remote_leader, rank).value_or(kNoComm);
    uint64_t made = 0;
    if (e.op == Op::Comm_create_group) {  // only its members call it: nothing on the parent
        if (colour == kNoComm) return;
        // Named by its members where the trace says (members of other groups with the same first
        // rank made other creations in between), else by its first rank.
        const int64_t group = value_of(e, Role::group, rank).value_or(colour);
        made = mix(mix(mix(parent, kMadeForGroup), group), s.group_creations[{parent, group}]++);
    } else if (e.op == Op::Intercomm_create) {
        take_place(places, s, parent);
        if (colour == kNoComm || remote_leader == kNoComm) return;
        const auto leaders = std::minmax(colour, remote_leader);
        made = mix(mix(mix(kMadeAcross, leaders.first), leaders.second), s.leader_pairs[leaders]++);
    } else {
        const int64_t k = take_place(places, s, parent);
        if (colour == kNoComm || made_id == kNoComm) return;
        // The groups of an intercommunicator split from another have their own leaders: the pair is
        // named by the lower one, as replay names it.
        const int64_t named = remote_leader >= 0 ? std::min(colour, remote_leader) : colour;
        made = k < 0 ? mix(mix(kUnknown, made_id), rank) : mix(mix(mix(parent, k), kMadeBySplit), named);
        if (k >= 0) births_[made] = mix(birth(parent).value_or(parent), k);
    }
    if (made_id == kNoComm) return;
    s.comms[made_id] = made;
    s.made.emplace_back('c', made_id);
    auto& members = members_[made];
    if (std::find(members.begin(), members.end(), rank) == members.end()) members.push_back(rank);
    take_place(places, s, made);
}

void StreamTracker::repeat(const std::map<uint64_t, int64_t>& per_iteration, Rank rank, std::optional<int64_t> times)
{
    RankState& s = state(rank);
    for (const auto& [stream, count] : per_iteration) {
        int64_t& next = s.next[stream];
        if (next < 0) continue;
        next = times ? next + count * std::max<int64_t>(*times, 0) : -1;
    }
}

size_t StreamTracker::mark(Rank rank) const
{
    const auto found = ranks_.find(rank);
    return found == ranks_.end() ? 0 : found->second.made.size();
}

void StreamTracker::forget_made_since(Rank rank, size_t mark)
{
    RankState& s = state(rank);
    for (size_t i = mark; i < s.made.size(); ++i) {
        const auto [kind, id] = s.made[i];
        (kind == 'c' ? s.comms : kind == 'w' ? s.windows : s.files).erase(id);
    }
    s.made.resize(std::min(mark, s.made.size()));
}

namespace {

void add(InstanceRanges& ranges, uint64_t stream, int64_t first, int64_t end)
{
    auto [at, inserted] = ranges.try_emplace(stream, InstanceRange{first, end, first >= 0 && end >= 0});
    if (inserted) return;
    InstanceRange& r = at->second;
    if (first < 0 || end < 0 || !r.known) {
        r.known = false;
        return;
    }
    r.first = std::min(r.first, first);
    r.end = std::max(r.end, end);
}

std::optional<int64_t> count_of(const Value& iterations, Rank rank)
{
    if (iterations.is_histogram()) return std::nullopt;
    return iterations.value_for(rank).value_or(0);
}

// Walks `rank`'s calls of `nodes` once, into `ranges` (streams: the instances they took).
void walk(const Sequence& seq, size_t from, size_t to, Rank rank, StreamTracker& tracker, InstanceRanges& ranges);

void walk_node(const Node& node, Rank rank, StreamTracker& tracker, InstanceRanges& ranges)
{
    if (node.is_event()) {
        const Event& e = node.event();
        if (!e.ranks.contains(rank)) return;
        for (const auto& place : tracker.take_part(e, rank)) {
            add(ranges, place.stream, place.instance, place.instance < 0 ? -1 : place.instance + 1);
        }
        return;
    }
    const Loop& loop = node.loop();
    const auto times = count_of(loop.iterations, rank);
    if (times && *times <= 0) return;
    const size_t mark = tracker.mark(rank);
    const size_t cut = loop.body.size() - std::min<size_t>(loop.last_leaves_out, loop.body.size());
    // One iteration walked, the others counted: each takes as many instances on each stream.
    InstanceRanges head;
    walk(loop.body, 0, cut, rank, tracker, head);
    InstanceRanges tail;
    if (!times || *times >= 2) walk(loop.body, cut, loop.body.size(), rank, tracker, tail);
    std::map<uint64_t, int64_t> per_head;
    std::map<uint64_t, int64_t> per_tail;
    for (const auto& [stream, r] : head) per_head[stream] = r.end - r.first;
    for (const auto& [stream, r] : tail) per_tail[stream] = r.end - r.first;
    const auto more = [](std::optional<int64_t> n, int64_t done) {
        return n ? std::optional<int64_t>(std::max<int64_t>(*n - done, 0)) : std::nullopt;
    };
    tracker.repeat(per_head, rank, more(times, 1));
    tracker.repeat(per_tail, rank, more(times, 2));
    for (const InstanceRanges* part : {&head, &tail}) {
        for (const auto& [stream, r] : *part) {
            const int64_t extra = (part == &head ? per_head[stream] * more(times, 1).value_or(0)
                                                 : per_tail[stream] * more(times, 2).value_or(0));
            add(ranges, stream, r.known && times ? r.first : -1, r.known && times ? r.end + extra : -1);
        }
    }
    tracker.forget_made_since(rank, mark);
}

void walk(const Sequence& seq, size_t from, size_t to, Rank rank, StreamTracker& tracker, InstanceRanges& ranges)
{
    for (size_t i = from; i < to; ++i) walk_node(seq[i], rank, tracker, ranges);
}

void collect_ranks(const Sequence& seq, RankList& out)
{
    for (const auto& node : seq) {
        if (node.is_event()) {
            out = out.unite(node.event().ranks);
        } else {
            collect_ranks(node.loop().body, out);
        }
    }
}

}  // namespace

CollectiveInstances::CollectiveInstances(const Sequence& seq) : nodes_(seq.size()), by_stream_(seq.size())
{
    const bool any = any_event(seq, [](const Event& e) { return is_collective_or_creation(e.op); });
    if (!any) return;
    RankList ranks;
    collect_ranks(seq, ranks);
    for (Rank rank : ranks.expand()) {
        for (size_t i = 0; i < seq.size(); ++i) {
            InstanceRanges mine;
            if (seq[i].is_event() && seq[i].event().ranks.contains(rank)) {
                const auto places = tracker_.take_part(seq[i].event(), rank);
                for (const auto& place : places) {
                    add(mine, place.stream, place.instance, place.instance < 0 ? -1 : place.instance + 1);
                }
                if (!places.empty()) by_stream_[i][places.front().stream].push_back(rank);
            } else {
                walk_node(seq[i], rank, tracker_, mine);
            }
            for (const auto& [stream, r] : mine) {
                add(nodes_[i], stream, r.known ? r.first : -1, r.known ? r.end : -1);
                auto& users = users_[stream];
                if (users.empty() || users.back() != rank) users.push_back(rank);
            }
        }
    }
}

const std::vector<Rank>& CollectiveInstances::users(uint64_t stream) const
{
    static const std::vector<Rank> none;
    const auto found = users_.find(stream);
    return found == users_.end() ? none : found->second;
}

}  // namespace htrace
