#include "trace/walk.hpp"

#include "trace/hash.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

namespace htrace {

uint64_t draw_site(const Event& event, Role role)
{
    return mix64(event.signature ^ mix64(static_cast<uint64_t>(role) + 1));
}

uint64_t draw_site(const Loop& loop)
{
    uint64_t depth = 1;
    const Sequence* body = &loop.body;
    while (!body->empty() && body->front().is_loop()) {
        body = &body->front().loop().body;
        ++depth;
    }
    const uint64_t first = body->empty() ? 0 : body->front().event().signature;
    // Past every role of an event's draws: the number of roles when loops got sites of their own, kept
    // as roles are added, so that a trace draws alike in every build.
    constexpr uint64_t kPastRoles = 38;
    return mix64(first ^ mix64(depth + kPastRoles + 1));
}

CommunicatorTable::CommunicatorTable(int32_t world_size) : world_size_(std::max(world_size, 0))
{
    auto world = std::make_shared<std::vector<Rank>>();
    world->reserve(static_cast<size_t>(world_size_));
    for (Rank r = 0; r < world_size_; ++r) world->push_back(r);
    world_ = std::move(world);
}

const CommunicatorTable::Members& CommunicatorTable::self(Rank rank) const
{
    Members& self = selves_[rank];
    if (!self) self = std::make_shared<std::vector<Rank>>(1, rank);
    return self;
}

const CommunicatorTable::Comms* CommunicatorTable::changed(Rank rank) const
{
    return by_rank_.empty() ? nullptr : by_rank_[static_cast<size_t>(rank)].get();
}

CommunicatorTable::Comms& CommunicatorTable::comms_to_change(Rank rank)
{
    if (by_rank_.empty()) by_rank_.resize(static_cast<size_t>(world_size_));
    auto& comms = by_rank_[static_cast<size_t>(rank)];
    if (!comms) comms = std::make_unique<Comms>(Comms{{0, world_}, {1, self(rank)}});
    return *comms;
}

CommunicatorTable::Comms& CommunicatorTable::remote_comms_to_change(Rank rank)
{
    if (remote_by_rank_.empty()) remote_by_rank_.resize(static_cast<size_t>(world_size_));
    auto& comms = remote_by_rank_[static_cast<size_t>(rank)];
    if (!comms) comms = std::make_unique<Comms>();
    return *comms;
}

const CommunicatorTable::Members* CommunicatorTable::find(Rank rank, int64_t comm) const
{
    if (!in_world(rank)) return nullptr;
    if (const Comms* comms = changed(rank)) {
        auto found = comms->find(comm);
        return found == comms->end() ? nullptr : &found->second;
    }
    if (comm == 0) return &world_;
    if (comm == 1) return &self(rank);
    return nullptr;
}

const CommunicatorTable::Members* CommunicatorTable::find_remote(Rank rank, int64_t comm) const
{
    if (!in_world(rank) || remote_by_rank_.empty()) return nullptr;
    const auto& comms = remote_by_rank_[static_cast<size_t>(rank)];
    if (!comms) return nullptr;
    auto found = comms->find(comm);
    return found == comms->end() ? nullptr : &found->second;
}

const std::vector<Rank>* CommunicatorTable::remote_members(Rank rank, int64_t comm) const
{
    const Members* found = find_remote(rank, comm);
    return found ? found->get() : nullptr;
}

std::shared_ptr<const std::vector<Rank>> CommunicatorTable::shared_peer_group(Rank rank, int64_t comm) const
{
    const Members* remote = find_remote(rank, comm);
    return remote ? *remote : shared_members(rank, comm);
}

const std::vector<Rank>* CommunicatorTable::members(Rank rank, int64_t comm) const
{
    const Members* found = find(rank, comm);
    return found ? found->get() : nullptr;
}

std::shared_ptr<const std::vector<Rank>> CommunicatorTable::shared_members(Rank rank, int64_t comm) const
{
    const Members* found = find(rank, comm);
    return found ? *found : nullptr;
}

namespace {

// Where `member` is in `group`, the members of communicator `comm`, if it is there. The world lists
// every rank in order: no search on replay's hottest path.
std::optional<int32_t> index_in(const std::vector<Rank>& group, int64_t comm, Rank member)
{
    if (comm == 0 && member >= 0 && static_cast<size_t>(member) < group.size()) return member;
    const auto found = std::find(group.begin(), group.end(), member);
    if (found == group.end()) return std::nullopt;
    return static_cast<int32_t>(found - group.begin());
}

}  // namespace

std::optional<Rank> CommunicatorTable::world_peer(Rank caller, int64_t comm, int64_t relative) const
{
    if (relative < 0) return std::nullopt;
    // One lookup of the caller's own group: replay resolves a peer per call.
    const Members* own = find(caller, comm);
    if (own == nullptr) return std::nullopt;
    const auto* remote = remote_members(caller, comm);
    const std::vector<Rank>& group = remote ? *remote : **own;
    if (group.empty()) return std::nullopt;
    const auto me = index_in(**own, comm, caller);  // in the caller's own group, never the remote one
    if (!me) return std::nullopt;
    return group[static_cast<size_t>((*me + relative) % static_cast<int64_t>(group.size()))];
}

std::optional<int32_t> CommunicatorTable::rank_in(Rank caller, int64_t comm, Rank member) const
{
    const auto* group = members(caller, comm);
    if (group == nullptr) return std::nullopt;
    if (const auto own = index_in(*group, comm, member)) return own;
    const auto* remote = remote_members(caller, comm);
    return remote ? index_in(*remote, comm, member) : std::nullopt;
}

std::optional<int64_t> CommunicatorTable::local_id(Rank rank, Rank other, int64_t other_comm) const
{
    if (other_comm == 0) return 0;
    if (rank == other) return other_comm;
    const auto* group = members(other, other_comm);
    if (group == nullptr || !in_world(rank)) return std::nullopt;
    // Across an intercommunicator, `rank` knows `other`'s group as its remote one.
    const bool inter = remote_members(other, other_comm) != nullptr;
    const auto& table = inter ? remote_by_rank_ : by_rank_;
    const Comms* comms = table.empty() ? nullptr : table[static_cast<size_t>(rank)].get();
    if (comms == nullptr) {
        // A rank whose communicators never changed shares only the world with others.
        return !inter && group == world_.get() ? std::optional<int64_t>(0) : std::nullopt;
    }
    for (const auto& [id, members] : *comms) {
        if (members.get() == group) return id;
    }
    return std::nullopt;
}

std::optional<Rank> CommunicatorTable::world_rank(Rank caller, int64_t comm, int64_t index) const
{
    const auto* remote = remote_members(caller, comm);
    const auto* group = remote ? remote : members(caller, comm);
    if (group == nullptr || index < 0 || index >= static_cast<int64_t>(group->size())) return std::nullopt;
    return (*group)[static_cast<size_t>(index)];
}

void CommunicatorTable::create(const Event& creation, const std::vector<Rank>& participants)
{
    const Value* new_comm = creation.find(Role::new_comm);
    const Value* color = creation.find(Role::color);
    const Value* key = creation.find(Role::key);
    if (new_comm == nullptr || color == nullptr || key == nullptr) return;
    // Members of one new communicator share a color (the world rank of its rank 0); order by key.
    std::map<int64_t, std::vector<std::pair<int64_t, Rank>>> groups;
    for (Rank r : participants) {
        auto c = color->value_for(r);
        auto k = key->value_for(r);
        if (!c || !k || *c == kNoComm) continue;
        groups[*c].emplace_back(*k, r);
    }
    std::map<int64_t, Members> made;
    for (auto& [c, entries] : groups) {
        std::sort(entries.begin(), entries.end());
        auto members = std::make_shared<std::vector<Rank>>();
        for (const auto& entry : entries) members->push_back(entry.second);
        for (const auto& entry : entries) {
            auto id = new_comm->value_for(entry.second);
            if (id && in_world(entry.second)) {
                comms_to_change(entry.second)[*id] = members;
                if (!remote_by_rank_.empty() && remote_by_rank_[static_cast<size_t>(entry.second)]) {
                    remote_by_rank_[static_cast<size_t>(entry.second)]->erase(*id);
                }
            }
        }
        made[c] = members;
    }
    if (creation.find(Role::remote_leader) != nullptr) pair_groups(creation, made);
}

// An intercommunicator's two groups are usually one event instance (its creation is collective over
// both), but where the merge kept them apart, the first group waits for the second.
void CommunicatorTable::pair_groups(const Event& creation, const std::map<int64_t, Members>& groups)
{
    const Value* remote_leader = creation.find(Role::remote_leader);
    const Value* new_comm = creation.find(Role::new_comm);
    for (const auto& [leader, members] : groups) {
        OpenGroup group{members, kNoComm, {}};
        for (Rank r : *members) {
            group.remote_leader = remote_leader->value_for(r).value_or(kNoComm);
            group.ids.emplace_back(r, new_comm->value_for(r).value_or(kNoComm));
        }
        open_groups_[leader] = std::move(group);
    }
    for (const auto& [leader, members] : groups) {
        auto mine = open_groups_.find(leader);
        if (mine == open_groups_.end()) continue;  // paired with its partner of this instance already
        auto other = open_groups_.find(mine->second.remote_leader);
        if (other == open_groups_.end() || other == mine || other->second.remote_leader != leader) continue;
        for (const auto& [a, b] : {std::pair{&mine->second, &other->second}, std::pair{&other->second, &mine->second}}) {
            for (const auto& [r, id] : a->ids) {
                if (id != kNoComm && in_world(r)) remote_comms_to_change(r)[id] = b->members;
            }
        }
        open_groups_.erase(other);
        open_groups_.erase(mine);
    }
}

void CommunicatorTable::free(const Event& release, const std::vector<Rank>& participants)
{
    const Value* comm = release.find(Role::comm);
    if (comm == nullptr) return;
    for (Rank r : participants) {
        auto id = comm->value_for(r);
        if (id && in_world(r)) {
            comms_to_change(r).erase(*id);
            if (!remote_by_rank_.empty() && remote_by_rank_[static_cast<size_t>(r)]) {
                remote_by_rank_[static_cast<size_t>(r)]->erase(*id);
            }
        }
    }
}

namespace {

void collect_participants(const Sequence& seq, std::vector<Rank>& out)
{
    for (const auto& node : seq) {
        if (node.is_loop()) {
            collect_participants(node.loop().body, out);
            continue;
        }
        const auto ranks = node.event().ranks.expand();
        out.insert(out.end(), ranks.begin(), ranks.end());
    }
}

bool changes_communicators(const Sequence& seq)
{
    return std::any_of(seq.begin(), seq.end(), [](const Node& node) {
        if (node.is_loop()) return changes_communicators(node.loop().body);
        const auto kind = operation_kind(node.event().op);
        return kind == OperationKind::comm_create || kind == OperationKind::comm_free;
    });
}

uint64_t saturating_product(uint64_t a, uint64_t b)
{
    uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? UINT64_MAX : product;
}

bool meets_across_ranks(const Sequence& seq)
{
    for (const auto& node : seq) {
        if (node.is_loop()) {
            if (meets_across_ranks(node.loop().body)) return true;
            continue;
        }
        const auto kind = operation_kind(node.event().op);
        if (kind == OperationKind::collective || kind == OperationKind::comm_create ||
            kind == OperationKind::comm_free) {
            return true;
        }
    }
    return false;
}

}  // namespace

double iterations_but_last(const Histogram& counts)
{
    double full = 0;
    for (const auto& bin : counts.bins()) full += static_cast<double>(bin.count) * std::max(bin.mean() - 1, 0.0);
    return counts.count() > 0 ? full / static_cast<double>(counts.count()) : 0;
}

bool count_drawn_for_all(const Loop& loop)
{
    return loop.iterations.is_histogram() && (loop.iterations.alike_on_every_rank() || meets_across_ranks(loop.body));
}

WalkCursor::WalkCursor(const Trace& trace, HistogramSampler* draws) : WalkCursor(trace, draws, false) {}

WalkCursor::WalkCursor(const Trace& trace, HistogramSampler* draws, bool fold_exact_loops)
    : trace_(trace), draws_(draws), fold_exact_loops_(fold_exact_loops), communicators_(trace.header.ranks)
{
    Frame top;
    top.sequence = &trace.body;
    top.active.assign(static_cast<size_t>(std::max(trace.header.ranks, 0)), 1);
    stack_.push_back(std::move(top));
}

std::optional<EventInstance> WalkCursor::next()
{
    if (to_free_ != nullptr) {
        communicators_.free(*to_free_, participants_);
        to_free_ = nullptr;
    }
    while (!stack_.empty()) {
        Frame& frame = stack_.back();
        if (frame.position == frame.sequence->size()) {
            if (frame.loop != nullptr && ++frame.iteration < frame.iterations) {
                frame.position = 0;
                frame.past_cut = false;
                restrict_to_iteration(frame);
                if (frame.count_shared) next_shared_iteration(0);
                continue;
            }
            if (frame.count_shared) next_shared_iteration(-1);
            stack_.pop_back();
            continue;
        }
        if (frame.loop != nullptr && frame.loop->last_leaves_out > 0 && !frame.past_cut &&
            frame.position == frame.sequence->size() - frame.loop->last_leaves_out) {
            frame.past_cut = true;
            if (leave_out_rest(frame)) {
                frame.position = frame.sequence->size();
                continue;
            }
        }
        const Node& node = (*frame.sequence)[frame.position++];
        if (node.is_loop()) {
            enter(node.loop(), frame);
            continue;
        }
        const Event& event = node.event();
        collect(event, frame.active);
        const auto kind = operation_kind(event.op);
        if (kind == OperationKind::comm_create) communicators_.create(event, participants_);
        if (kind == OperationKind::comm_free) to_free_ = &event;
        return EventInstance{&event, &participants_, frame.weight,
                             shared_count_frames_ > 0 ? shared_draw_iteration_ : 0, frame.repeats};
    }
    return std::nullopt;
}

// Pushes a frame for the loop's first iteration, if it runs at all. `outer` may move: copy first.
void WalkCursor::enter(const Loop& loop, const Frame& outer)
{
    Frame frame;
    frame.sequence = &loop.body;
    frame.loop = &loop;
    frame.weight = outer.weight;
    frame.repeats = outer.repeats;
    frame.active = outer.active;
    if (draws_ == nullptr && !active_in(loop, frame.active)) return;
    if (fold_exact_loops_ && draws_ == nullptr && !loop.iterations.is_histogram() &&
        !changes_communicators(loop.body) && fold(loop, frame)) {
        return;
    }
    if (loop.iterations.is_histogram() && draws_ == nullptr) {
        frame.weight *= loop.iterations.histogram().mean();
    } else if (loop.iterations.is_exact()) {
        frame.iterations = loop.iterations.exact();
    } else if (count_shared(loop)) {
        // One count for all participants, each of which recorded one.
        uint64_t takes = 0;
        for (Rank r : participants_of(loop)) {
            takes += static_cast<size_t>(r) < frame.active.size() && frame.active[static_cast<size_t>(r)] ? 1 : 0;
        }
        // Alike on every rank, the participants recorded the same count in each instance: one draw
        // hands it to all. Otherwise they recorded different counts of one loop (ranks that folded
        // their calls differently: a polling loop of other lengths before a collective), and their
        // body's values come from all of them: one rank's count would give every rank that rank's
        // share of the others' iterations, far more or far fewer collectives than the run made.
        const Histogram& counts = loop.iterations.histogram();
        frame.iterations = loop.iterations.alike_on_every_rank() ? draws_->draw(counts, draw_site(loop), takes)
                                                                 : draws_->draw_mean(counts, draw_site(loop), takes);
        frame.count_shared = true;
    } else {
        frame.counts.assign(frame.active.size(), 0);
        if (loop.iterations.is_histogram()) {
            const uint64_t site = draw_site(loop);
            for (Rank r : participants_of(loop)) {
                if (static_cast<size_t>(r) < frame.active.size() && frame.active[static_cast<size_t>(r)]) {
                    frame.counts[static_cast<size_t>(r)] = draws_->draw(loop.iterations.histogram(), site);
                }
            }
        } else {
            for (const auto& entry : loop.iterations.per_rank()) {
                for (Rank r : entry.ranks.expand()) {
                    if (static_cast<size_t>(r) < frame.counts.size()) frame.counts[static_cast<size_t>(r)] = entry.value;
                }
            }
        }
        frame.iterations = 0;
        for (size_t r = 0; r < frame.active.size(); ++r) {
            if (frame.active[r]) frame.iterations = std::max(frame.iterations, frame.counts[r]);
        }
        frame.loop_active = frame.active;
        restrict_to_iteration(frame);
    }
    if (frame.iterations <= 0) return;
    if (frame.count_shared) next_shared_iteration(1);
    stack_.push_back(std::move(frame));
}

// Whether any of the active ranks takes part in the loop. One that none does would be iterated for
// nothing, and a hostile count (a loop of 10^15 around an event of other ranks, or around nothing)
// would spin there: a walk that draws nothing skips it. Replay's draws stay as they were.
bool WalkCursor::active_in(const Loop& loop, const std::vector<char>& active)
{
    const auto& participants = participants_of(loop);
    return std::any_of(participants.begin(), participants.end(), [&](Rank r) {
        return r >= 0 && static_cast<size_t>(r) < active.size() && active[static_cast<size_t>(r)];
    });
}

// For readers that count (fold_exact_loops): the body once for each count the active ranks have,
// with those ranks, standing for that many iterations; the last group goes on the stack first, so
// the groups are walked in ascending count. Where the ranks have more than a few different counts
// (each group holds a flag per rank), nothing is pushed and the loop is iterated as usual.
bool WalkCursor::fold(const Loop& loop, const Frame& base)
{
    constexpr size_t kMostGroups = 64;
    std::map<int64_t, std::vector<char>> groups;  // count -> the active ranks that have it
    for (size_t r = 0; r < base.active.size(); ++r) {
        if (!base.active[r]) continue;
        const int64_t count = loop.iterations.value_for(static_cast<Rank>(r)).value_or(0);
        if (count <= 0) continue;
        auto [group, inserted] = groups.try_emplace(count);
        if (inserted && groups.size() > kMostGroups) return false;
        if (inserted) group->second.assign(base.active.size(), 0);
        group->second[r] = 1;
    }
    for (auto group = groups.rbegin(); group != groups.rend(); ++group) {
        Frame frame = base;
        frame.active = std::move(group->second);
        frame.folded_count = static_cast<uint64_t>(group->first);
        frame.repeats = saturating_product(base.repeats, frame.folded_count);
        stack_.push_back(std::move(frame));
    }
    return true;
}

// `frames`: +1 entering a loop whose count was drawn for all, -1 leaving one, 0 for its next iteration.
void WalkCursor::next_shared_iteration(int frames)
{
    shared_count_frames_ += frames;
    ++shared_draw_iteration_;
}

// At the point where a loop's last iteration stops (Loop::last_leaves_out): whether the rest of this
// pass is left out, for every rank in it. With per-rank counts, the rest has only the ranks with an
// iteration to come; visited once for a histogram count, it stands for one iteration fewer.
bool WalkCursor::leave_out_rest(Frame& frame)
{
    if (!frame.counts.empty()) {
        bool any = false;
        for (size_t r = 0; r < frame.active.size(); ++r) {
            frame.active[r] = frame.active[r] && frame.counts[r] > frame.iteration + 1 ? 1 : 0;
            any = any || frame.active[r];
        }
        return !any;
    }
    if (frame.folded_count > 0) {  // the rest of the body runs in all iterations but the last
        // repeats is the outer ones times the count, unless it saturated.
        if (frame.repeats != UINT64_MAX) frame.repeats = frame.repeats / frame.folded_count * (frame.folded_count - 1);
        return frame.folded_count == 1;
    }
    if (frame.loop->iterations.is_histogram() && draws_ == nullptr) {
        const Histogram& counts = frame.loop->iterations.histogram();
        frame.weight = counts.mean() > 0 ? frame.weight * iterations_but_last(counts) / counts.mean() : 0;
        return frame.weight <= 0;
    }
    return frame.iteration + 1 >= frame.iterations;
}

// With per-rank counts, an iteration has the ranks that are still within their own count.
void WalkCursor::restrict_to_iteration(Frame& frame)
{
    if (frame.counts.empty()) return;
    for (size_t r = 0; r < frame.active.size(); ++r) {
        frame.active[r] = frame.loop_active[r] && frame.counts[r] > frame.iteration ? 1 : 0;
    }
}

const std::vector<Rank>& WalkCursor::participants_of(const Loop& loop)
{
    auto [slot, inserted] = loop_participants_.try_emplace(&loop);
    if (inserted) {
        collect_participants(loop.body, slot->second);
        std::sort(slot->second.begin(), slot->second.end());
        slot->second.erase(std::unique(slot->second.begin(), slot->second.end()), slot->second.end());
    }
    return slot->second;
}

bool WalkCursor::count_shared(const Loop& loop)
{
    if (!loop.iterations.is_histogram()) return false;
    auto [slot, inserted] = loop_count_shared_.try_emplace(&loop, false);
    if (inserted) slot->second = count_drawn_for_all(loop);
    return slot->second;
}

void WalkCursor::collect(const Event& event, const std::vector<char>& active)
{
    participants_.clear();
    event.ranks.for_each_run([&](const RankRun& run) {
        if (run.dims.size() == 1 && run.dims[0].count > 0) {  // the common case, without expand()'s allocation
            for (int32_t i = 0; i < run.dims[0].count; ++i) {
                const Rank r = run.start + i * run.dims[0].stride;
                if (static_cast<size_t>(r) < active.size() && active[static_cast<size_t>(r)]) participants_.push_back(r);
            }
            return;
        }
        for (Rank r : RankList::from_runs({run}).expand()) {
            if (static_cast<size_t>(r) < active.size() && active[static_cast<size_t>(r)]) participants_.push_back(r);
        }
    });
    // Runs of one rank list come in order, so this rarely has work to do.
    if (!std::is_sorted(participants_.begin(), participants_.end())) std::sort(participants_.begin(), participants_.end());
}

TraceWalker::TraceWalker(const Trace& trace, CallVisitor on_call) : trace_(trace), on_call_(std::move(on_call)) {}

TraceWalker::TraceWalker(const Trace& trace, EventVisitor on_event, HistogramSampler& draws)
    : trace_(trace), on_event_(std::move(on_event)), draws_(&draws)
{
}

void TraceWalker::run()
{
    WalkCursor cursor(trace_, draws_);
    while (const auto instance = cursor.next()) {
        const Event& event = *instance->event;
        if (on_event_) on_event_(event, *instance->participants, cursor.communicators());
        if (on_call_) {
            for (Rank r : *instance->participants) on_call_(event, r, cursor.communicators(), instance->weight);
        }
    }
}

}  // namespace htrace
