#include "merge/phase_folding.hpp"

#include "merge/rank_merge.hpp"
#include "merge/unroll.hpp"
#include "merge/world_steps.hpp"
#include "trace/completion_set.hpp"
#include "trace/hash.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>

namespace htrace {
namespace {

// How many of a rank's most frequent top-level call sites are tried as the anchor.
constexpr size_t kMaxAnchors = 6;
// How deep steps fold within steps.
constexpr int kMaxDepth = 2;

Sequence fold_best(Sequence seq, const MergeRule& rule, Rank rank, int depth);

// What must be equal for two nodes to be the same step's call: the call site, or a loop's shape.
// A loop of one event has that event's key: it aligns with the event made once.
uint64_t shape_key(const Node& node)
{
    if (node.is_event()) {
        return mix64(static_cast<uint64_t>(node.event().op) * 0x100000001b3ull ^ node.event().signature);
    }
    const Sequence& body = node.loop().body;
    if (body.size() == 1 && body.front().is_event()) return shape_key(body.front());
    uint64_t h = 0x1009ull;
    for (const auto& inner : body) h = mix64(h * 31 + shape_key(inner));
    return h;
}

bool holds_key(const Sequence& seq, uint64_t key)
{
    return std::any_of(seq.begin(), seq.end(), [&](const Node& n) { return shape_key(n) == key; });
}

bool holds_collective(const Node& node)
{
    return any_event(node, [](const Event& e) { return is_collective_or_creation(e.op); });
}

// A collective on the world, or a loop of one.
bool is_world_collective(const Node& node)
{
    const Node* event = &node;
    if (node.is_loop()) {
        if (node.loop().body.size() != 1) return false;
        event = &node.loop().body.front();
    }
    if (!event->is_event() || !is_collective_or_creation(event->event().op)) return false;
    const Value* comm = event->event().find(Role::comm);
    return comm != nullptr && *comm == Value(kWorldComm);
}

bool makes_or_frees_handles(const Node& node)
{
    return any_event(node, [](const Event& e) {
        const OperationKind kind = operation_kind(e.op);
        return kind == OperationKind::comm_create || kind == OperationKind::comm_free ||
               kind == OperationKind::one_sided || kind == OperationKind::buffer || is_window_collective(e.op);
    });
}

// Whether every value in `seq` is exact: the same in every run of the loops it is in.
bool all_exact(const Sequence& seq)
{
    for (const auto& node : seq) {
        if (node.is_loop()) {
            if (!node.loop().iterations.is_exact() || !all_exact(node.loop().body)) return false;
        } else if (std::any_of(node.event().params.begin(), node.event().params.end(),
                               [](const Param& p) { return !p.value.is_exact(); })) {
            return false;
        }
    }
    return true;
}

struct Stretch {
    Sequence nodes;
    uint64_t runs = 1;  // a loop the folder made of whole steps stands for that many
};

// Steps that start at a collective leave what comes before the first one apart, and that often
// ends as the steps do after their collectives (the time steps before the first rebalance):
// E (X E)^n. Where the end of `before` (from its first node that aligns) aligns with what follows
// the last collective of `loop`'s body, it joins the loop, which turns into n + 1 iterations of
// E X whose last leaves out X. `loop` runs `runs` times.
void take_first_step_end(Sequence& before, Loop& loop, uint64_t runs, const MergeRule& rule, Rank rank)
{
    Sequence& body = loop.body;
    // Only where every step starts at its collective (no step made it optional).
    if (body.empty() || !body.front().is_event() || !is_world_collective(body.front())) return;
    const auto last_collective = std::find_if(body.rbegin(), body.rend(), holds_collective);
    const auto split = static_cast<size_t>(body.rend() - last_collective);
    if (split == body.size()) return;
    const Sequence end(body.begin() + static_cast<ptrdiff_t>(split), body.end());
    const size_t first = aligned_range(end, before, rule).first;
    if (first >= before.size() ||
        std::any_of(before.begin() + static_cast<ptrdiff_t>(first), before.end(),
                    [](const Node& n) { return holds_collective(n) || makes_or_frees_handles(n); })) {
        return;
    }
    Sequence first_end(before.begin() + static_cast<ptrdiff_t>(first), before.end());
    const size_t apart = nested_size(end) + nested_size(first_end);
    Sequence joined = merge_iterations(end, std::move(first_end), runs, 1, rule, rank);
    if (nested_size(joined) >= apart) return;
    before.resize(first);
    joined.insert(joined.end(), std::make_move_iterator(body.begin()),
                  std::make_move_iterator(body.begin() + static_cast<ptrdiff_t>(split)));
    loop.body = std::move(joined);
    loop.last_leaves_out = static_cast<uint32_t>(split);
    loop.iterations = Value(static_cast<int64_t>(runs + 1));
}

// A sequence cut where steps start: what comes before the first step, and the steps.
struct Steps {
    Sequence before;
    std::vector<Stretch> stretches;
    const Node* anchor_node = nullptr;  // a node of the sequence with the anchor's key
};

// Cuts a sequence at each node with the anchor's key, and within the loops that hold one.
class StepCutter {
public:
    explicit StepCutter(uint64_t anchor) : anchor_(anchor) {}

    Steps cut(const Sequence& seq) &&
    {
        for (const auto& node : seq) {
            if (shape_key(node) == anchor_) {
                steps_.anchor_node = &node;
                steps_.stretches.push_back({{node}, 1});
                open_ = true;
            } else if (!node.is_loop() || !node.loop().iterations.is_exact() || node.loop().iterations.exact() <= 0 ||
                       !holds_key(node.loop().body, anchor_)) {
                continue_step(node);
            } else {
                take_folded_steps(node.loop());
            }
        }
        return std::move(steps_);
    }

private:
    // A node that continues the step under way (or comes before the first).
    void continue_step(const Node& node)
    {
        if (steps_.stretches.empty()) {
            steps_.before.push_back(node);
            return;
        }
        if (!open_) steps_.stretches.push_back({{}, 1});
        steps_.stretches.back().nodes.push_back(node);
        open_ = true;
    }

    // Steps the loop folder already folded (alike in a row).
    void take_folded_steps(const Loop& loop)
    {
        const Sequence& body = loop.body;
        const auto at = std::find_if(body.begin(), body.end(), [&](const Node& n) { return shape_key(n) == anchor_; });
        steps_.anchor_node = &*at;
        const auto count = static_cast<uint64_t>(loop.iterations.exact());
        if (!all_exact(body)) {
            // Values merged from different steps stand for all of them: the body is one stretch, even
            // where it starts elsewhere in the step, and what follows is a stretch of its own (without
            // the anchor).
            steps_.stretches.push_back({body, count});
            open_ = false;
            return;
        }
        // Its unit may start before the anchor (B1 A B2, repeated), and the calls after it belong to
        // its last step: B1 (A B2 B1)^(count - 1) A B2. So B1 ends the step before, the loop stands
        // for all steps but the last, and the last is open. Its values are the same in every step,
        // so copies count right; their times are shared out.
        Sequence one_run = body;
        keep_share(one_run, 1, count);
        const auto anchor_at = at - body.begin();
        for (auto it = one_run.begin(); it != one_run.begin() + anchor_at; ++it) continue_step(*it);
        if (count > 1) {
            Sequence rotated(at, body.end());
            rotated.insert(rotated.end(), body.begin(), at);
            keep_share(rotated, count - 1, count);
            steps_.stretches.push_back({std::move(rotated), count - 1});
        }
        steps_.stretches.push_back({Sequence(one_run.begin() + anchor_at, one_run.end()), 1});
        open_ = true;
    }

    uint64_t anchor_;
    Steps steps_;
    bool open_ = false;  // whether the last stretch takes the nodes that follow
};

bool any_node(const std::vector<Stretch>& stretches, bool (*holds)(const Node&))
{
    return std::any_of(stretches.begin(), stretches.end(), [&](const Stretch& stretch) {
        return std::any_of(stretch.nodes.begin(), stretch.nodes.end(), holds);
    });
}

// What comes after the last step (the end of the run) stays outside the loop: the last step keeps
// what aligns with the steps before it, and leaves the rest, from the first node that does not. (A
// last stretch that stands for several steps has no end of the run in it.)
Sequence take_run_end(std::vector<Stretch>& stretches, const MergeRule& rule)
{
    if (stretches.back().runs != 1) return {};
    Sequence& last = stretches.back().nodes;
    // Against each step on its own: the steps run together would let a collective after the
    // last step align with one of a later step (collectives align across call sites).
    size_t taken = 0;
    for (size_t k = 0; k + 1 < stretches.size(); ++k) {
        taken = std::max(taken, std::min(aligned_range(stretches[k].nodes, last, rule).second, last.size()));
    }
    // Calls of the steps that follow in another order (the last step's exchange) are still the
    // last step's, up to a collective.
    const auto in_steps = [&](const Node& node) {
        return std::any_of(stretches.begin(), stretches.end() - 1,
                           [&](const Stretch& s) { return holds_key(s.nodes, shape_key(node)); });
    };
    while (taken < last.size() && !holds_collective(last[taken]) && in_steps(last[taken])) ++taken;
    Sequence after(std::make_move_iterator(last.begin() + static_cast<ptrdiff_t>(taken)),
                   std::make_move_iterator(last.end()));
    last.resize(taken);
    if (last.empty()) stretches.pop_back();
    return after;
}

// What comes before the first step (the start of the run) stays outside the loop up to its first
// node that aligns with the steps; from there on it joins them as a step of its own.
void take_early_step(Sequence& before, std::vector<Stretch>& stretches, const MergeRule& rule)
{
    Sequence steps;
    for (const auto& stretch : stretches) steps.insert(steps.end(), stretch.nodes.begin(), stretch.nodes.end());
    const size_t first_taken = std::min(aligned_range(steps, before, rule).first, before.size());
    if (first_taken >= before.size()) return;
    stretches.insert(stretches.begin(),
                     Stretch{Sequence(std::make_move_iterator(before.begin() + static_cast<ptrdiff_t>(first_taken)),
                                      std::make_move_iterator(before.end())),
                             1});
    before.resize(first_taken);
}

// The steps merged into one body, which runs as many times as they all do.
Stretch merged_steps(std::vector<Stretch>& stretches, const MergeRule& rule, Rank rank, int depth)
{
    // Steps within steps (time steps between rebalances) fold within each step first (not in a
    // loop's body: its values already stand for all its runs, and new ones would stand for one).
    if (depth < kMaxDepth) {
        for (auto& stretch : stretches) {
            if (stretch.runs == 1) stretch.nodes = fold_best(std::move(stretch.nodes), rule, rank, depth + 1);
        }
    }
    Stretch merged = std::move(stretches.front());
    for (size_t k = 1; k < stretches.size(); ++k) {
        merged.nodes = merge_iterations(std::move(merged.nodes), std::move(stretches[k].nodes), merged.runs,
                                        stretches[k].runs, rule, rank);
        merged.runs += stretches[k].runs;
    }
    return merged;
}

// `seq` folded into one loop of the stretches starting at `anchor`, or nothing if fewer than two
// start there.
std::optional<Sequence> fold_at(const Sequence& seq, uint64_t anchor, const MergeRule& rule, Rank rank, int depth)
{
    Steps steps = StepCutter(anchor).cut(seq);
    std::vector<Stretch>& stretches = steps.stretches;
    if (stretches.size() < 2) return std::nullopt;
    // Communicators and windows made and freed in the steps must stay paired, call for call.
    // Steps that hold a collective must start at a collective on the world, so that every rank
    // counts as many (replay draws the count of a loop around a collective once for all ranks).
    if (any_node(stretches, makes_or_frees_handles)) return std::nullopt;
    const bool collectives = any_node(stretches, holds_collective);
    if (collectives && !is_world_collective(*steps.anchor_node)) return std::nullopt;

    Sequence after = take_run_end(stretches, rule);
    // Where the steps hold collectives, each starts at one, so that every rank runs as many; what
    // comes before the first then stays apart (its own steps folded).
    if (collectives) {
        if (depth < kMaxDepth) steps.before = fold_best(std::move(steps.before), rule, rank, depth + 1);
    } else {
        take_early_step(steps.before, stretches, rule);
    }
    Stretch merged = merged_steps(stretches, rule, rank, depth);
    Loop loop{Value(static_cast<int64_t>(merged.runs)), std::move(merged.nodes)};
    if (collectives) take_first_step_end(steps.before, loop, merged.runs, rule, rank);
    Sequence out = std::move(steps.before);
    out.push_back(Node{std::move(loop)});
    out.insert(out.end(), std::make_move_iterator(after.begin()), std::make_move_iterator(after.end()));
    return out;
}

// Top-level keys by how often they occur, most frequent first (ties: the earliest); a collective on
// the world in the body of a top-level loop counts once for the loop.
std::vector<uint64_t> frequent_keys(const Sequence& seq)
{
    std::unordered_map<uint64_t, size_t> occurrences;
    std::vector<uint64_t> keys;
    const auto occurs = [&](uint64_t key) {
        if (occurrences[key]++ == 0) keys.push_back(key);
    };
    for (const auto& node : seq) {
        occurs(shape_key(node));
        // A loop the folder made of alike steps holds their anchor once more (fold_at cuts it
        // there): a rank idle for its first steps has them in a loop and the step's collective
        // once after. Only collectives on the world: other calls in loops are not where steps
        // start, and as candidates they lead ranks to cut their steps differently.
        if (!node.is_loop() || !node.loop().iterations.is_exact() || node.loop().iterations.exact() <= 0) continue;
        std::vector<uint64_t> inner;
        for (const auto& step_node : node.loop().body) {
            if (step_node.is_event() && is_world_collective(step_node)) inner.push_back(shape_key(step_node));
        }
        std::sort(inner.begin(), inner.end());
        inner.erase(std::unique(inner.begin(), inner.end()), inner.end());
        for (const uint64_t key : inner) occurs(key);
    }
    std::stable_sort(keys.begin(), keys.end(), [&](uint64_t a, uint64_t b) { return occurrences[a] > occurrences[b]; });
    while (!keys.empty() && occurrences[keys.back()] < 2) keys.pop_back();
    if (keys.size() > kMaxAnchors) keys.resize(kMaxAnchors);
    return keys;
}

Sequence fold_best(Sequence seq, const MergeRule& rule, Rank rank, int depth)
{
    std::optional<Sequence> best;
    for (const uint64_t key : frequent_keys(seq)) {
        auto folded = fold_at(seq, key, rule, rank, depth);
        if (folded && nested_size(*folded) < nested_size(best ? *best : seq)) best = std::move(folded);
    }
    return best ? std::move(*best) : std::move(seq);
}

bool is_completed_set(const Param& p) { return p.role == Role::completed_set; }

size_t completed_set_values(const Event& e)
{
    return static_cast<size_t>(std::count_if(e.params.begin(), e.params.end(), is_completed_set));
}

// A completion whose requests span several chunks of positions has several completed_set values where
// its call site's other calls have one, so it aligns with none of them (a Waitsome that completed
// many requests at once). Merged, completed sets keep only how many requests each call completed
// (precision.hpp), so there its set becomes that count, drawn like a merged one, and aligns.
void one_completed_set_per_call(Sequence& seq, const MergeRule& rule, Rank rank)
{
    std::map<std::pair<Op, uint64_t>, std::set<size_t>> shapes;
    for_each_event(seq, [&](Event& e) {
        if (const size_t n = completed_set_values(e); n > 0) shapes[{e.op, e.signature}].insert(n);
    });
    for_each_event(seq, [&](Event& e) {
        const size_t n = completed_set_values(e);
        if (n < 2 || shapes[{e.op, e.signature}].size() < 2) return;
        int64_t count = 0;
        for (const auto& p : e.params) {
            if (p.role != Role::completed_set) continue;
            if (!p.value.is_exact() || p.value.exact() == kUnknownCompletedSet) return;
            count += completed_set_as_oldest(p.value.exact());
        }
        const auto first = std::find_if(e.params.begin(), e.params.end(), is_completed_set);
        const Value oldest(count);
        first->value = as_histogram({oldest, std::max<uint64_t>(e.compute.count, 1), rank}, Role::completed_set, rule);
        e.params.erase(std::remove_if(first + 1, e.params.end(), is_completed_set), e.params.end());
    });
}

}  // namespace

Sequence fold_phases(Sequence seq, const MergeRule& rule, Rank rank, const std::function<Sequence(Sequence)>& refold)
{
    if (!may_merge_iterations(Value(1), Value(0), rule)) return seq;
    // Which request a cancel hits is the rank's own history, which calls made optional would lose:
    // only steps that cancel nothing merge.
    const bool cancels = cancels_requests(seq);
    if (!cancels) one_completed_set_per_call(seq, rule, rank);
    const auto fold_calls = [&](Sequence calls) { return cancels ? calls : fold_best(std::move(calls), rule, rank, 1); };
    if (auto steps = fold_world_steps(seq, rule, rank, fold_calls)) return std::move(*steps);
    if (refold) seq = refold(std::move(seq));
    return cancels ? seq : fold_best(std::move(seq), rule, rank, 0);
}

}  // namespace htrace
