#include "merge/rank_merge.hpp"

#include "merge/collective_instances.hpp"
#include "merge/loop_folding.hpp"
#include "merge/split_ranks.hpp"
#include "merge/rank_compute.hpp"
#include "merge/unroll.hpp"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <utility>

namespace htrace {
namespace {

// Sequences longer than this are aligned window by window (near-linear for similar traces).
constexpr size_t kAlignWindow = 384;

// What the two sequences of a merge are: the traces of disjoint sets of ranks, or two stretches of
// one rank's own calls that become one loop body (phase_folding.hpp).
enum class Across { ranks, iterations };

struct MergeContext {
    MergeRule rule;
    Across across = Across::ranks;
    Rank rank = 0;  // across iterations: whose calls (histograms keep the ranks of their min and max)
    // Across ranks: whether a node one side lacks may become every rank's (shared_optional_node):
    // where the rule merges a count with 0 and no rank of the job cancels requests.
    bool share_unaligned = false;
    // Across ranks: loops around collectives align only where their exact counts are equal (the
    // fallback where merging counts left a collective instance apart: WholenessCheck).
    bool exact_collective_counts = false;
};

// Replay needs one event for all members of a collective or creation.
bool is_collective(const Event& e) { return is_collective_or_creation(e.op); }

bool contains_collective(const Sequence& seq) { return any_event(seq, is_collective); }

bool same_roles(const Event& a, const Event& b)
{
    if (a.params.size() != b.params.size()) return false;
    for (size_t i = 0; i < a.params.size(); ++i) {
        if (a.params[i].role != b.params[i].role) return false;
    }
    return true;
}

// Members of one instance name one root (on an intercommunicator the root's own group names it
// symbolically: MPI_ROOT, MPI_PROC_NULL).
bool same_root(const Event& a, const Event& b)
{
    const Value* ra = a.find(Role::root);
    const Value* rb = b.find(Role::root);
    const auto named = [](const Value* root) { return root != nullptr && root->is_exact() && root->exact() >= 0; };
    return !named(ra) || !named(rb) || *ra == *rb;
}

bool events_align(const Event& a, const Event& b)
{
    if (a.op != b.op || !same_roles(a, b)) return false;
    if (a.signature == b.signature) return true;
    // Collectives meet on their communicator whatever call site issued them: replay must issue
    // one instance for all its members.
    if (!is_collective(a)) return false;
    const Value* ca = a.find(Role::comm);
    const Value* cb = b.find(Role::comm);
    if (ca == nullptr || cb == nullptr || !(*ca == *cb)) return false;
    return same_root(a, b);
}

std::vector<PerRankValue> as_per_rank(const Value& v, const RankList& ranks)
{
    if (v.is_per_rank()) return v.per_rank();
    return {PerRankValue{v.exact(), ranks}};
}

// The per-rank values of both sides (disjoint ranks) as one value (lossless), exact where every
// rank has one value.
Value per_rank_union(const Value& a, const RankList& ranks_a, const Value& b, const RankList& ranks_b)
{
    if (a.is_exact() && b.is_exact() && a.exact() == b.exact()) return a;
    Value merged = Value::per_rank_union(a, ranks_a, b, ranks_b);
    const auto [low, high] = merged.per_rank_range();
    return low == high ? Value(low) : merged;
}

// Whether `exact` (per rank) is worth keeping over `drawn`, its histogram: where it takes at most 8
// bytes more (about one rank run). A histogram names no ranks, so it is always a little smaller where both
// have a few entries; exact values keep replay causal, and the allowance is a constant, so a
// per-rank form that grows with the ranks still loses to the histogram.
bool worth_keeping_exact(const Value& exact, const Value& drawn)
{
    constexpr size_t kAllowance = 8;
    return encoded_size(exact) <= encoded_size(drawn) + kAllowance;
}

// Whether two histograms of different ranks hold the same values in the same proportions: then each
// rank of both had (about) the same values as often, and their merge is still alike on every rank.
bool same_distribution(const Value& a, const Value& b)
{
    if (!a.is_histogram() || !b.is_histogram()) return false;
    const Histogram& x = a.histogram();
    const Histogram& y = b.histogram();
    if (x.bins().size() != y.bins().size()) return false;
    const uint64_t x_count = x.count();
    const uint64_t y_count = y.count();
    for (size_t i = 0; i < x.bins().size(); ++i) {
        const auto& p = x.bins()[i];
        const auto& q = y.bins()[i];
        if (p.min != q.min || p.max != q.max) return false;
        uint64_t p_share = 0;
        uint64_t q_share = 0;
        // Products of counts beyond 2^64 (never in practice) count as different: replay then draws
        // per participant, as for any histogram.
        if (__builtin_mul_overflow(p.count, y_count, &p_share) || __builtin_mul_overflow(q.count, x_count, &q_share) ||
            p_share != q_share) {
            return false;
        }
    }
    return true;
}

// Both sides' values as one: a histogram where the rule allows merging them, else kept per rank
// (lossless). With `exact_if_smaller` (endpoints, and counts of loops without collectives), values
// whose per-rank form takes at most a few bytes more than their histogram (worth_keeping_exact)
// stay per rank even so: little would be saved, and exact values keep replay causal, where a
// pairwise exchange's peers `{+1 on even ranks, -1 on odd}` drawn from a histogram would pair ranks
// at random, and a pipeline's first rank would draw receives it never made. Other values follow
// the rule as written (docs/design.md, "Histograms"). `calls_*` is how many calls (or
// loop instances) each side's value stands for, per rank.
Value combine(const Value& a, const RankList& ranks_a, uint64_t calls_a, const Value& b, const RankList& ranks_b,
              uint64_t calls_b, Role role, const MergeRule& rule, bool exact_if_smaller)
{
    if (a == b && a.is_exact()) return a;
    if (!(role == Role::requests ? may_merge_iterations(a, b, rule) : may_merge(a, b, role, rule))) {
        return per_rank_union(a, ranks_a, b, ranks_b);
    }
    const auto first = [](const RankList& r) { return r.empty() ? Rank{0} : r.first(); };
    // As per-rank values, an exact value counts once for each of its ranks.
    const auto spread = [](const Value& v, const RankList& r) { return v.is_exact() ? Value(as_per_rank(v, r)) : v; };
    Value merged = merge_values({spread(a, ranks_a), calls_a, first(ranks_a)}, {spread(b, ranks_b), calls_b, first(ranks_b)},
                                role, rule);
    if (merged.is_histogram() && merged.alike_on_every_rank() && !same_distribution(a, b)) {
        merged.set_alike_on_every_rank(false);
    }
    if (!exact_if_smaller || a.is_histogram() || b.is_histogram()) return merged;
    Value exact = per_rank_union(a, ranks_a, b, ranks_b);
    return worth_keeping_exact(exact, merged) ? exact : merged;
}

// Whether two values can become one: merged under the rule, or, across ranks, kept per rank (not
// a histogram). One rank's iterations have no ranks to keep values apart by.
bool values_fit(const Value& a, const Value& b, Role role, const MergeContext& context)
{
    // Asked first: it is cheap, and true for most pairs the alignment weighs.
    if (context.across == Across::ranks && !a.is_histogram() && !b.is_histogram()) return true;
    const MergeRule& rule = context.rule;
    return role == Role::requests ? may_merge_iterations(a, b, rule) : may_merge(a, b, role, rule);
}

// Both sides' values as one (values_fit holds); `exact_if_smaller` as in combine().
Value merged_value(const Value& a, const RankList& ranks_a, uint64_t calls_a, const Value& b, const RankList& ranks_b,
                   uint64_t calls_b, Role role, const MergeContext& context, bool exact_if_smaller)
{
    if (context.across == Across::ranks) {
        return combine(a, ranks_a, calls_a, b, ranks_b, calls_b, role, context.rule, exact_if_smaller);
    }
    if (a == b && !a.is_histogram()) return a;
    return merge_values({a, calls_a, context.rank}, {b, calls_b, context.rank}, role, context.rule);
}

// A loop that runs one event a number of times: where the count may be 1, the same event called
// once aligns with it (a rank that waited once and one that waited three times).
const Node* single_event_body(const Loop& loop)
{
    const bool one_event = loop.body.size() == 1 && loop.body.front().is_event() && loop.last_leaves_out == 0;
    return one_event ? &loop.body.front() : nullptr;
}

Node as_loop(Node event)
{
    Loop loop{Value(1), {}};
    loop.body.push_back(std::move(event));
    return Node{std::move(loop)};
}

// Calls that do not align, within one rank: a node that one stretch has and the other lacks runs 0
// times in the other, so it becomes a loop whose count is a histogram that includes 0 (only the
// rule of p = 0 merges a count with 0). `own` and `other`: how many times each stretch stands for.
Node optional_node(Node node, uint64_t own, uint64_t other, const MergeContext& context)
{
    if (node.is_event()) node = as_loop(std::move(node));
    Value& count = node.loop().iterations;
    count = merge_values({count, own, context.rank}, {Value(0), other, context.rank}, Role::requests, context.rule);
    return node;
}

// Two events from the same call site with the same values: aligning them is never worse.
bool same_call(const Node& a, const Node& b)
{
    if (!a.is_event() || !b.is_event()) return false;
    const Event& x = a.event();
    const Event& y = b.event();
    return x.op == y.op && x.signature == y.signature && x.params == y.params;
}

bool any_rank_may_call(const Node& node);

// Whether the alignment leaves a collective of one side (or a loop holding one) unpaired, where
// the merge cannot give it to the ranks of both sides (`shared`: the rule lets nodes one side
// lacks become every rank's, shared_optional_node).
bool collective_left(const Sequence& seq, const std::vector<std::pair<size_t, size_t>>& pairs, bool first, bool shared)
{
    std::vector<char> aligned(seq.size(), 0);
    for (const auto& pair : pairs) aligned[first ? pair.first : pair.second] = 1;
    for (size_t i = 0; i < seq.size(); ++i) {
        if (aligned[i]) continue;
        const Node& node = seq[i];
        if (any_event(node, is_collective) && !(shared && any_rank_may_call(node))) return true;
    }
    return false;
}

void collect_participants(const Sequence& seq, RankList& out);
RankList collect_participants(const Sequence& seq);

// Whether any rank could make this node's calls: point-to-point calls, completions, collectives on
// the world (every rank is a member) and calls recorded by name, whose values are not kept per rank. (The members of another
// communicator, and a request's own history, are the ranks' own.)
bool any_rank_may_call(const Node& node)
{
    if (node.is_loop()) {
        const Loop& loop = node.loop();
        // A count per rank around a collective would leave its instances apart among the members.
        if (loop.iterations.is_per_rank() && contains_collective(loop.body)) return false;
        return std::all_of(loop.body.begin(), loop.body.end(), any_rank_may_call);
    }
    const Event& e = node.event();
    switch (operation_kind(e.op)) {
        case OperationKind::send:
        case OperationKind::recv:
        case OperationKind::sendrecv:
        case OperationKind::probe:
        case OperationKind::completion:
        case OperationKind::opaque:  // recorded by name only
            break;
        case OperationKind::collective:
            if (is_window_collective(e.op)) return false;  // windows are made and freed, not drawn
            break;
        default:
            return false;
    }
    const Value* comm = e.find(Role::comm);
    if (comm != nullptr && !(*comm == Value(kWorldComm))) return false;
    // A completion that found a request cancelled tells of the rank's own cancel.
    if (e.find(Role::cancelled_set) != nullptr || e.find(Role::cancelled_peer) != nullptr) return false;
    // Peers kept per rank only to save bytes become histograms when shared (draw_peers).
    return std::none_of(e.params.begin(), e.params.end(),
                        [](const Param& p) { return p.value.is_per_rank() && !role_is_peer(p.role); });
}

void add_participants(Sequence& seq, const RankList& ranks)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            add_participants(node.loop().body, ranks);
        } else {
            node.event().ranks = node.event().ranks.unite(ranks);
        }
    }
}

// Peers kept per rank (combine()) in a body whose count is drawn become histograms, as they would
// have been, where some participant has no peer of its own: a rank that ran no iteration may draw one.
void draw_peers(Sequence& body, const MergeRule& rule)
{
    for (auto& node : body) {
        if (node.is_loop()) {
            draw_peers(node.loop().body, rule);
            continue;
        }
        Event& e = node.event();
        const auto ranks = static_cast<uint64_t>(std::max<int64_t>(e.ranks.size(), 1));
        const uint64_t per_rank = std::max<uint64_t>(e.compute.count / ranks, 1);
        for (auto& param : e.params) {
            if (!role_is_peer(param.role) || !param.value.is_per_rank()) continue;
            const auto& entries = param.value.per_rank_entries();
            const int64_t covered = std::accumulate(entries.begin(), entries.end(), int64_t{0},
                                                    [](int64_t n, const PerRankValue& v) { return n + v.ranks.size(); });
            if (covered == e.ranks.size()) continue;
            param.value = as_histogram({param.value, per_rank, e.ranks.first()}, param.role, rule);
        }
    }
}

// Calls that do not align across ranks, where the rule merges a count with 0 (p = 0): the node one
// side has becomes a loop that every rank of both sides runs, its count a histogram of what its
// ranks ran and 0 for every other rank, so ranks that behave alike in distribution are one event
// and the expected number of calls stays what the ranks made. `own_ranks`/`other_ranks`: the ranks
// of the node's side and of the other; `own`/`other`: how many times each side's sequence runs
// per rank.
Node shared_optional_node(Node node, const RankList& own_ranks, uint64_t own, const RankList& other_ranks,
                          uint64_t other, const MergeContext& context)
{
    const RankList callers = participants(node);
    if (node.is_event()) node = as_loop(std::move(node));
    Loop& loop = node.loop();
    const auto lacking_own = static_cast<uint64_t>(std::max<int64_t>(own_ranks.size() - callers.size(), 0));
    const uint64_t zeros = own * lacking_own + other * static_cast<uint64_t>(std::max<int64_t>(other_ranks.size(), 0));
    const uint64_t count_weight = loop.iterations.is_exact() ? own * static_cast<uint64_t>(callers.size()) : own;
    const Rank first = callers.empty() ? Rank{0} : callers.first();
    if (zeros > 0) {
        Value drawn = merge_values({loop.iterations, count_weight, first}, {Value(0), zeros, first}, Role::requests,
                                   context.rule);
        // Some ranks run it and others do not: not alike on every rank.
        drawn.set_alike_on_every_rank(false);
        // Per-rank counts where they take no more bytes, as in combine(): the master's loop of a
        // master/worker code is {n on rank 0, 0 elsewhere}, not a count any rank may draw. Not
        // around collectives, whose instances need one count for all their members.
        if (!loop.iterations.is_histogram() && !contains_collective(loop.body)) {
            std::vector<Rank> idle;
            for (Rank r : own_ranks.expand()) {
                if (!callers.contains(r)) idle.push_back(r);
            }
            const RankList without = RankList::from_sorted(idle).unite(other_ranks);
            Value exact = per_rank_union(loop.iterations, callers, Value(0), without);
            if (worth_keeping_exact(exact, drawn)) drawn = std::move(exact);
        }
        loop.iterations = std::move(drawn);
    }
    add_participants(loop.body, own_ranks.unite(other_ranks));
    if (!loop.iterations.is_per_rank()) draw_peers(loop.body, context.rule);
    return node;
}

class Aligner {
public:
    explicit Aligner(const MergeContext& context) : context_(context) {}

    // A node's instances on one communicator, or on any colour of one split (where it was made).
    struct Held {
        uint64_t made;
        int64_t first;
        int64_t end;
        auto operator<=>(const Held&) const = default;
    };

    // The collective instances the top-level nodes of the two sequences hold (collective_instances.hpp):
    // two nodes that hold different ones never align. Instances of one communicator are each their own,
    // and the k-th of one colour of a split may meet only the k-th of another colour of that split, so
    // that every later merge finds the colours in step.
    void know_instances(const Sequence& a, const CollectiveInstances& on_a, const Sequence& b,
                        const CollectiveInstances& on_b)
    {
        for (const auto& [seq, on] : {std::pair{&a, &on_a}, std::pair{&b, &on_b}}) {
            for (size_t i = 0; i < seq->size(); ++i) {
                std::vector<Held> held;
                for (const auto& [stream, range] : on->of(i)) {
                    if (!range.known) {
                        held.clear();
                        break;
                    }
                    if (range.end > range.first) held.push_back({on->birth(stream).value_or(stream), range.first, range.end});
                }
                std::sort(held.begin(), held.end());
                held.erase(std::unique(held.begin(), held.end()), held.end());
                if (!held.empty()) instances_[&(*seq)[i]] = std::move(held);
            }
        }
    }

    // Weight of aligning a with b (0: they cannot align).
    double weight(const Node& a, const Node& b) { return weight(a, b, held_of(a), held_of(b)); }

    // The same, with the instances each node holds already looked up (nullptr: none known).
    double weight(const Node& a, const Node& b, const std::vector<Held>* held_a, const std::vector<Held>* held_b)
    {
        if (held_a != nullptr && held_b != nullptr && *held_a != *held_b) return 0;
        if (a.is_event() && b.is_event()) return event_weight(a.event(), b.event());
        if (a.is_event() != b.is_event()) {
            const Loop& loop = (a.is_loop() ? a : b).loop();
            const Node* body = single_event_body(loop);
            if (body == nullptr || !counts_fit(Value(1), loop.iterations, loop.body, {})) return 0;
            return event_weight((a.is_event() ? a : b).event(), body->event());
        }
        const Loop& x = a.loop();
        const Loop& y = b.loop();
        const bool both_cut_or_whole = (x.last_leaves_out > 0) == (y.last_leaves_out > 0);
        if (!both_cut_or_whole || !counts_fit(x.iterations, y.iterations, x.body, y.body)) return 0;
        auto key = std::make_pair(&a, &b);
        auto found = loop_weights_.find(key);
        if (found != loop_weights_.end()) return found->second;
        // Across ranks, loops whose bodies keep a collective apart do not align: the collective's
        // instances would be split between them (ranks that fold the same phase into loops
        // differently). Left apart, they are unrolled until the collectives meet (merge_aligned).
        // Within a rank a collective one iteration lacks becomes optional, like any call.
        const Alignment body = align_bodies(x, y);
        const bool shared = context_.share_unaligned;
        const bool splits = context_.across == Across::ranks && (collective_left(x.body, body.pairs, true, shared) ||
                                                                 collective_left(y.body, body.pairs, false, shared));
        const double w = splits ? 0 : body.weight;
        loop_weights_[key] = w;
        return w;
    }

    struct Alignment {
        std::vector<std::pair<size_t, size_t>> pairs;
        double weight = 0;
        bool conflict = false;  // collective instances that could not all be paired (collective_anchors)
        // Pairs of nodes holding the same instances that cross one another (where there are any): the
        // order one side would have to follow to meet the other.
        std::vector<std::pair<size_t, size_t>> crossing;
    };

    Alignment align(const Sequence& a, const Sequence& b) { return align(a, 0, a.size(), b, 0, b.size()); }

    // Loops whose last iteration leaves out the end of the body align that end with each other's,
    // and the rest with the rest, so that the merged body has one place to stop.
    Alignment align_bodies(const Loop& x, const Loop& y)
    {
        if (x.last_leaves_out == 0) return align(x.body, y.body);
        const size_t cut_x = x.body.size() - x.last_leaves_out;
        const size_t cut_y = y.body.size() - y.last_leaves_out;
        Alignment out = align(x.body, 0, cut_x, y.body, 0, cut_y);
        const Alignment rest = align(x.body, cut_x, x.body.size(), y.body, cut_y, y.body.size());
        out.pairs.insert(out.pairs.end(), rest.pairs.begin(), rest.pairs.end());
        out.weight += rest.weight;
        return out;
    }

    // Aligns a[i, end_a) with b[j, end_b).
    Alignment align(const Sequence& a, size_t i, size_t end_a, const Sequence& b, size_t j, size_t end_b)
    {
        Alignment result;
        while (i < end_a && j < end_b) {
            // Where both sides go on alike, align call by call (the common case of similar ranks
            // costs linear time); the table below is only for where they differ.
            if (same_call(a[i], b[j])) {
                result.pairs.emplace_back(i, j);
                result.weight += weight(a[i], b[j]);
                ++i;
                ++j;
                continue;
            }
            // Where they differ, find the next alignment in windows that grow until one holds a
            // match, and take only its first pair before going on call by call: a divergence of
            // d calls costs about d^2, not the window's size squared.
            bool found = false;
            for (size_t window = 8;; window *= 2) {
                const size_t wa = std::min(end_a - i, window);
                const size_t wb = std::min(end_b - j, window);
                Alignment best = align_window(a, i, wa, b, j, wb);
                if (!best.pairs.empty()) {
                    const auto first = best.pairs.front();
                    result.pairs.push_back(first);
                    result.weight += weight(a[first.first], b[first.second]);
                    i = first.first + 1;
                    j = first.second + 1;
                    found = true;
                    break;
                }
                const bool whole = i + wa == end_a && j + wb == end_b;
                if (whole) break;
                if (window >= kAlignWindow) {
                    // Nothing in common this far ahead: leave these calls unaligned.
                    i += wa / 2;
                    j += wb / 2;
                    found = true;
                    break;
                }
            }
            if (!found) break;
        }
        return result;
    }

private:
    double event_weight(const Event& x, const Event& y) const
    {
        if (!events_align(x, y)) return 0;
        for (size_t i = 0; i < x.params.size(); ++i) {
            if (!values_fit(x.params[i].value, y.params[i].value, x.params[i].role, context_)) return 0;
        }
        // Collectives weigh more: leaving one unaligned would split an instance in replay.
        return is_collective(x) ? 4.0 : 1.0;
    }

    // Whether two loop counts can be one, given the bodies they run.
    bool counts_fit(const Value& x, const Value& y, const Sequence& body_x, const Sequence& body_y) const
    {
        if (x == y) return true;
        if (!values_fit(x, y, Role::requests, context_)) return false;
        // Ranks that iterate different numbers of times cannot share a collective instance; a
        // histogram count is drawn once for all of them in replay, so it can.
        const bool collectives = contains_collective(body_x) || contains_collective(body_y);
        if (!collectives) return true;
        if (context_.exact_collective_counts && x.is_exact() && y.is_exact()) return false;
        return may_merge_iterations(x, y, context_.rule);
    }

    Alignment align_window(const Sequence& a, size_t ia, size_t na, const Sequence& b, size_t ib, size_t nb)
    {
        // Classic LCS table with weights; ties prefer skipping in `a` first so that, between
        // aligned pairs, each side keeps its order. Each pair is weighed once, each node's
        // instances looked up once: the window is where the merge of unlike ranks spends its time.
        // (Weighing loops aligns their bodies, in windows of their own: nothing here is shared.)
        std::vector<const std::vector<Held>*> held_a(na);
        std::vector<const std::vector<Held>*> held_b(nb);
        for (size_t x = 0; x < na; ++x) held_a[x] = held_of(a[ia + x]);
        for (size_t y = 0; y < nb; ++y) held_b[y] = held_of(b[ib + y]);
        std::vector<double> weights(na * nb, 0.0);
        auto weight_at = [&](size_t x, size_t y) -> double& { return weights[x * nb + y]; };
        std::vector<double> table((na + 1) * (nb + 1), 0.0);
        auto at = [&](size_t x, size_t y) -> double& { return table[x * (nb + 1) + y]; };
        for (size_t x = na; x-- > 0;) {
            for (size_t y = nb; y-- > 0;) {
                double best = std::max(at(x + 1, y), at(x, y + 1));
                const double w = weight(a[ia + x], b[ib + y], held_a[x], held_b[y]);
                weight_at(x, y) = w;
                if (w > 0) best = std::max(best, w + at(x + 1, y + 1));
                at(x, y) = best;
            }
        }
        Alignment out;
        size_t x = 0;
        size_t y = 0;
        while (x < na && y < nb) {
            const double w = weight_at(x, y);
            if (w > 0 && at(x, y) == w + at(x + 1, y + 1)) {
                out.pairs.emplace_back(ia + x, ib + y);
                out.weight += w;
                ++x;
                ++y;
            } else if (at(x, y) == at(x + 1, y)) {
                ++x;
            } else {
                ++y;
            }
        }
        return out;
    }

    MergeContext context_;
    std::map<std::pair<const Node*, const Node*>, double> loop_weights_;
    const std::vector<Held>* held_of(const Node& node) const
    {
        if (instances_.empty()) return nullptr;
        const auto found = instances_.find(&node);
        return found == instances_.end() ? nullptr : &found->second;
    }

    std::unordered_map<const Node*, std::vector<Held>> instances_;
};

Node merge_nodes(Node a, Node b, uint64_t weight_a, uint64_t weight_b, const MergeContext& context);
Sequence merge_aligned(Sequence a, Sequence b, uint64_t weight_a, uint64_t weight_b, const MergeContext& context);

// A loop of exact count n whose body is X E, X from a collective to the last one: as n + 1 iterations
// of E X whose first runs no E and whose last leaves out X, which is how phase folding writes
// E (X E)^n, for a rank whose run had no E before its first X (only where a count merges with 0).
// Returns whether it turned any.
bool cut_collective_loops(Sequence& seq, const MergeContext& context)
{
    if (!may_merge_iterations(Value(1), Value(0), context.rule)) return false;
    bool turned = false;
    for (auto& node : seq) {
        if (!node.is_loop() || node.loop().last_leaves_out > 0 || !node.loop().iterations.is_exact()) continue;
        Loop& loop = node.loop();
        const int64_t runs = loop.iterations.exact();
        const auto last = std::find_if(loop.body.rbegin(), loop.body.rend(),
                                       [](const Node& n) { return any_event(n, is_collective); });
        const auto split = static_cast<size_t>(loop.body.rend() - last);
        // Steps start at their collective (phase folding), so X does.
        if (runs < 1 || split == 0 || split == loop.body.size() || !any_event(loop.body.front(), is_collective)) {
            continue;
        }
        const RankList ranks = participants(node);
        const Rank first = ranks.empty() ? Rank{0} : ranks.first();
        const MergeContext steps{context.rule, Across::iterations, first};
        Sequence end(std::make_move_iterator(loop.body.begin() + static_cast<ptrdiff_t>(split)),
                     std::make_move_iterator(loop.body.end()));
        loop.body.resize(split);
        Sequence turned_body = merge_aligned(std::move(end), {}, static_cast<uint64_t>(runs), 1, steps);
        turned_body.insert(turned_body.end(), std::make_move_iterator(loop.body.begin()),
                           std::make_move_iterator(loop.body.end()));
        loop.body = std::move(turned_body);
        loop.last_leaves_out = static_cast<uint32_t>(split);
        loop.iterations = Value(runs + 1);
        turned = true;
    }
    return turned;
}

bool has_cut_loop(const Sequence& seq)
{
    const auto cut = [](const Node& n) { return n.is_loop() && n.loop().last_leaves_out > 0; };
    return std::any_of(seq.begin(), seq.end(), cut);
}

// Unrolls every loop of `seq` that holds a collective and has an exact count; returns whether it
// unrolled any.
bool unroll_collective_loops(Sequence& seq)
{
    Sequence out;
    bool unrolled = false;
    for (auto& node : seq) {
        if (may_unroll(node) && contains_collective(node.loop().body)) {
            append_unrolled(out, std::move(node.loop()));
            unrolled = true;
        } else {
            out.push_back(std::move(node));
        }
    }
    seq = std::move(out);
    return unrolled;
}

// Whether `x` of one side and `y` of the other, which hold the same collective instances, can be one
// node: events of one operation with the same parameters (whatever call site and communicator id each
// rank used: ids differ where ranks made different numbers of communicators), or nodes the weights
// align (loops of the same shape).
bool same_instance_fits(Aligner& aligner, const Node& x, const Node& y, const MergeContext& context)
{
    if (x.is_event() && y.is_event()) {
        const Event& e = x.event();
        const Event& f = y.event();
        if (e.op != f.op || !same_roles(e, f) || !same_root(e, f)) return false;
        for (size_t i = 0; i < e.params.size(); ++i) {
            if (!values_fit(e.params[i].value, f.params[i].value, e.params[i].role, context)) return false;
        }
        return true;
    }
    return aligner.weight(x, y) > 0;
}

using HeldInstances = std::vector<std::pair<size_t, InstanceRange>>;  // (node, its instances), in order

// For each stream, the nodes of `seq` that hold instances of it.
std::map<uint64_t, HeldInstances> held_by_stream(const Sequence& seq, const CollectiveInstances& instances)
{
    std::map<uint64_t, HeldInstances> streams;
    for (size_t i = 0; i < seq.size(); ++i) {
        for (const auto& [stream, range] : instances.of(i)) {
            if (range.end > range.first || !range.known) streams[stream].emplace_back(i, range);
        }
    }
    return streams;
}

// The nodes of one side and of the other that hold the same instances of a stream, and whether
// every node that holds some of them holds the same as its counterpart.
struct SameInstances {
    std::vector<std::pair<size_t, size_t>> pairs;
    bool one_to_one = true;
};

SameInstances same_instances(const HeldInstances& x, const HeldInstances& y)
{
    SameInstances out;
    size_t i = 0;
    size_t j = 0;
    while (i < x.size() && j < y.size()) {
        const auto& [na, ra] = x[i];
        const auto& [nb, rb] = y[j];
        if (!ra.known || !rb.known) break;  // beyond a drawn count, nothing is known of this stream
        if (ra.end <= rb.first) {
            ++i;
        } else if (rb.end <= ra.first) {
            ++j;
        } else {
            if (ra == rb) {
                out.pairs.emplace_back(na, nb);
            } else {
                out.one_to_one = false;
            }
            if (ra.end <= rb.end) ++i;
            if (rb.end <= ra.end) ++j;
        }
    }
    return out;
}

// Colours of one split that only one side uses, by where they were made: their nodes, where that
// side keeps them in step (each node holds the same instances of all of them), else nothing.
std::map<uint64_t, std::optional<HeldInstances>> colours_in_step(const CollectiveInstances& instances,
                                                                 const std::map<uint64_t, HeldInstances>& own,
                                                                 const std::map<uint64_t, HeldInstances>& other)
{
    std::map<uint64_t, std::optional<HeldInstances>> by_birth;
    for (const auto& [stream, held] : own) {
        const auto birth = instances.birth(stream);
        if (!birth || other.count(stream)) continue;
        auto [at, first] = by_birth.try_emplace(*birth, held);
        if (!first && at->second && !(*at->second == held)) at->second.reset();
    }
    return by_birth;
}

// The anchors found so far: nodes of one side paired one to one with nodes of the other.
class AnchorPairs {
public:
    AnchorPairs(Aligner& aligner, const Sequence& a, const Sequence& b, const MergeContext& context)
        : aligner_(aligner), a_(a), b_(b), context_(context)
    {
    }

    // Pairs the nodes that hold the same instances; false where they are not one to one. Where
    // `tentative` (colours of a split, kept in step where that costs nothing), nothing is paired
    // unless the nodes hold their instances one to one, and a pair that cannot be made is no conflict.
    bool pair(const HeldInstances& x, const HeldInstances& y, bool tentative)
    {
        const SameInstances same = same_instances(x, y);
        if (tentative && !same.one_to_one) return false;
        bool one_to_one = same.one_to_one;
        for (const auto& [na, nb] : same.pairs) {
            if (!may_pair(na, nb)) {
                if (!tentative) one_to_one = false;
                continue;
            }
            a_to_b_[na] = nb;
            b_to_a_[nb] = na;
        }
        return one_to_one;
    }

    // Leaves out the pairs that cross others, and returns all pairs as they were where any did.
    std::vector<std::pair<size_t, size_t>> leave_out_crossing()
    {
        std::vector<std::pair<size_t, size_t>> kept;
        for (const auto& [i, j] : a_to_b_) {
            if (kept.empty() || j > kept.back().second) kept.emplace_back(i, j);
        }
        if (kept.size() == a_to_b_.size()) return {};
        std::vector<std::pair<size_t, size_t>> crossing(a_to_b_.begin(), a_to_b_.end());
        keep(std::map<size_t, size_t>(kept.begin(), kept.end()));
        return crossing;
    }

    // Pairs as pair() does, tentatively, but only where that crosses no anchor.
    void pair_where_nothing_crosses(const HeldInstances& x, const HeldInstances& y)
    {
        const auto before = a_to_b_;
        pair(x, y, true);
        const std::vector<std::pair<size_t, size_t>> all(a_to_b_.begin(), a_to_b_.end());
        const bool ordered = std::adjacent_find(all.begin(), all.end(), [](const auto& p, const auto& q) {
                                 return q.second <= p.second;
                             }) == all.end();
        if (!ordered) keep(before);
    }

    std::vector<std::pair<size_t, size_t>> pairs() const { return {a_to_b_.begin(), a_to_b_.end()}; }

private:
    // Neither node is paired with another, and the two can be one node.
    bool may_pair(size_t na, size_t nb)
    {
        const auto ab = a_to_b_.find(na);
        const bool paired_otherwise = ab != a_to_b_.end() ? ab->second != nb : b_to_a_.count(nb) > 0;
        return !paired_otherwise && same_instance_fits(aligner_, a_[na], b_[nb], context_);
    }

    void keep(std::map<size_t, size_t> a_to_b)
    {
        a_to_b_ = std::move(a_to_b);
        b_to_a_.clear();
        for (const auto& [i, j] : a_to_b_) b_to_a_[j] = i;
    }

    Aligner& aligner_;
    const Sequence& a_;
    const Sequence& b_;
    const MergeContext& context_;
    std::map<size_t, size_t> a_to_b_;
    std::map<size_t, size_t> b_to_a_;
};

// Collectives are forced to meet: a node of one side and a node of the other that hold the same
// instances of a collective (on a communicator, window or file the ranks of both sides use:
// collective_instances.hpp) align, whatever call sites made them, and only the stretches between
// such anchors are matched by weight. (Weights alone may prefer a shifted pairing that lines up more
// point-to-point calls, and split an instance.) Where instances are not held one node to one node in
// order -- a loop on one side whose iterations the other folded otherwise, or non-blocking
// collectives on two communicators started in opposite orders -- that is a conflict: the caller
// unrolls loops and tries again, and the pairs that keep the order are kept. Then ranks on different
// communicators made by one creation (colours of a split) pair their instances one to one too, where
// that crosses nothing, which keeps each colour's instances in step for the merges to come.
Aligner::Alignment collective_anchors(Aligner& aligner, const Sequence& a, const CollectiveInstances& on_a,
                                      const Sequence& b, const CollectiveInstances& on_b, const MergeContext& context)
{
    Aligner::Alignment out;
    const auto streams_a = held_by_stream(a, on_a);
    const auto streams_b = held_by_stream(b, on_b);
    AnchorPairs anchors(aligner, a, b, context);
    for (const auto& [stream, held_a] : streams_a) {
        const auto found = streams_b.find(stream);
        if (found != streams_b.end() && !anchors.pair(held_a, found->second, false)) out.conflict = true;
    }
    // Pairs that cross others are left out: the instances of non-blocking collectives started in
    // opposite orders cannot all meet in one sequence.
    out.crossing = anchors.leave_out_crossing();
    if (!out.crossing.empty()) out.conflict = true;
    // Colours of one split that only one side uses, where that side keeps them in step: as one
    // stream of each side.
    const auto siblings_a = colours_in_step(on_a, streams_a, streams_b);
    const auto siblings_b = colours_in_step(on_b, streams_b, streams_a);
    for (const auto& [birth, held_a] : siblings_a) {
        const auto found = siblings_b.find(birth);
        if (!held_a || found == siblings_b.end() || !found->second) continue;
        anchors.pair_where_nothing_crosses(*held_a, *found->second);
    }
    out.pairs = anchors.pairs();
    return out;
}

Aligner::Alignment align_sequences(const Sequence& a, const Sequence& b, const MergeContext& context)
{
    // A fresh aligner each time: its cache is keyed by node addresses, which moving frees.
    Aligner aligner(context);
    const CollectiveInstances on_a(a);
    const CollectiveInstances on_b(b);
    aligner.know_instances(a, on_a, b, on_b);
    const auto anchored = collective_anchors(aligner, a, on_a, b, on_b, context);
    const auto& anchors = anchored.pairs;
    Aligner::Alignment out;
    out.conflict = anchored.conflict && context.rule.precision == 100;
    if (out.conflict) out.crossing = anchored.crossing;
    size_t i = 0;
    size_t j = 0;
    for (size_t k = 0; k <= anchors.size(); ++k) {
        const auto [end_a, end_b] = k < anchors.size() ? anchors[k] : std::make_pair(a.size(), b.size());
        const auto between = aligner.align(a, i, end_a, b, j, end_b);
        out.pairs.insert(out.pairs.end(), between.pairs.begin(), between.pairs.end());
        out.weight += between.weight;
        if (k == anchors.size()) break;
        out.pairs.emplace_back(end_a, end_b);
        out.weight += std::max(aligner.weight(a[end_a], b[end_b]), 1.0);
        i = end_a + 1;
        j = end_b + 1;
    }
    return out;
}

// A loop of one event whose count is a histogram that includes 0: a call some iterations or ranks
// make and others do not.
const Event* optional_call(const Node& node)
{
    if (!node.is_loop()) return nullptr;
    const Loop& loop = node.loop();
    const Node* body = single_event_body(loop);
    if (body == nullptr || !loop.iterations.is_histogram() || loop.iterations.histogram().min().value != 0) return nullptr;
    return &body->event();
}

// Two optional calls of one call site in one body, where the rule merges a count with 0: they
// become one at the first one's place, whose count per run is what the two made together. The
// counts' histograms count (about) the same runs, so the joined one keeps the calls each made and
// only as many runs with none as both had beyond the runs: the expected number of calls is the
// sum, even where the two were not made in different runs.
bool join_optional_calls(Node& into, const Node& from, const MergeContext& context)
{
    const Event* x = optional_call(into);
    const Event* y = optional_call(from);
    if (x == nullptr || y == nullptr || x->op != y->op || x->signature != y->signature || !same_roles(*x, *y)) {
        return false;
    }
    for (size_t i = 0; i < x->params.size(); ++i) {
        if (!may_merge(x->params[i].value, y->params[i].value, x->params[i].role, context.rule)) return false;
    }
    const Histogram& a = into.loop().iterations.histogram();
    const Histogram& b = from.loop().iterations.histogram();
    Histogram joined = a;
    joined.merge(b);
    if (a.count() != b.count() || !joined.take_away(0, a.count())) return false;
    Loop& loop = into.loop();
    loop.body.front() = merge_nodes(std::move(loop.body.front()), from.loop().body.front(), 1, 1, context);
    loop.iterations = Value(std::move(joined), into.loop().iterations.alike_on_every_rank() &&
                                                   from.loop().iterations.alike_on_every_rank());
    return true;
}

void join_optional_repeats(Sequence& seq, const MergeContext& context)
{
    std::map<std::pair<Op, uint64_t>, size_t> first;  // call site -> position in `out`
    Sequence out;
    for (auto& node : seq) {
        if (const Event* call = optional_call(node)) {
            const auto [at, inserted] = first.try_emplace({call->op, call->signature}, out.size());
            if (!inserted && join_optional_calls(out[at->second], node, context)) continue;
        }
        out.push_back(std::move(node));
    }
    seq = std::move(out);
}

// Reorders both sequences so that the nodes of each pair (holding the same collective instances) come
// in one order on both sides, as far as every rank's own order allows: nodes that no rank shares may
// come in either order (instances of different colours of a split, or of groups of different
// members, that one half of the job joined in one order and the other half in another). Nodes no
// pair names travel with the next one that does. False where no order keeps every rank's (the two
// sides started non-blocking collectives on two communicators in opposite orders), and where the
// order is the one they had.
bool share_order(Sequence& a, Sequence& b, const std::vector<std::pair<size_t, size_t>>& pairs)
{
    // One graph of both: b's nodes after a's, each paired node of b one with its partner in a.
    const size_t na = a.size();
    const size_t n = na + b.size();
    std::vector<size_t> same(n);
    for (size_t i = 0; i < n; ++i) same[i] = i;
    for (const auto& [i, j] : pairs) same[na + j] = i;
    constexpr size_t kLast = std::numeric_limits<size_t>::max();
    // Where a node goes among ties: a's place, and b's nodes before the next paired node's.
    std::vector<size_t> key(n, kLast);
    for (size_t i = 0; i < na; ++i) key[i] = i;
    size_t next = kLast;
    for (size_t j = b.size(); j-- > 0;) {
        if (same[na + j] != na + j) next = same[na + j];
        key[na + j] = next;
    }
    std::vector<std::vector<size_t>> after(n);
    std::vector<size_t> waiting_for(n, 0);
    std::map<Rank, size_t> previous;  // the ranks of a and of b are apart
    for (size_t k = 0; k < n; ++k) {
        const size_t node = same[k];
        for (Rank r : participants(k < na ? a[k] : b[k - na]).expand()) {
            const auto [at, first] = previous.try_emplace(r, node);
            if (!first) {
                if (at->second != node) {
                    after[at->second].push_back(node);
                    ++waiting_for[node];
                }
                at->second = node;
            }
        }
    }
    std::set<std::pair<size_t, size_t>> ready;  // (key, node)
    for (size_t k = 0; k < n; ++k) {
        if (same[k] == k && waiting_for[k] == 0) ready.emplace(key[k], k);
    }
    std::vector<size_t> order;
    while (!ready.empty()) {
        const size_t node = ready.begin()->second;
        ready.erase(ready.begin());
        order.push_back(node);
        for (size_t later : after[node]) {
            if (--waiting_for[later] == 0) ready.emplace(key[later], later);
        }
    }
    size_t nodes = 0;
    for (size_t k = 0; k < n; ++k) nodes += same[k] == k ? 1 : 0;
    if (order.size() != nodes) return false;
    std::vector<size_t> place(n, 0);
    for (size_t p = 0; p < order.size(); ++p) place[order[p]] = p;
    const auto reorder = [&](Sequence& seq, size_t offset) {
        std::vector<size_t> by_place(seq.size());
        for (size_t k = 0; k < seq.size(); ++k) by_place[k] = k;
        std::stable_sort(by_place.begin(), by_place.end(),
                         [&](size_t x, size_t y) { return place[same[offset + x]] < place[same[offset + y]]; });
        if (std::is_sorted(by_place.begin(), by_place.end())) return false;
        Sequence out;
        out.reserve(seq.size());
        for (size_t k : by_place) out.push_back(std::move(seq[k]));
        seq = std::move(out);
        return true;
    };
    const bool moved_a = reorder(a, 0);
    const bool moved_b = reorder(b, na);
    return moved_a || moved_b;
}

// Pulls apart, by ranks, the events an earlier merge made of collectives on several communicators
// (colours of a split) and the loops around collectives that ran a different number of times on
// different ranks, so that each part holds the instances of one communicator, or runs one count:
// where the other side of a merge holds those instances in different nodes, or unrolled, only the
// parts can meet theirs. Returns whether it pulled any apart.
bool pull_apart(Sequence& seq)
{
    const CollectiveInstances instances(seq);
    Sequence out;
    bool pulled = false;
    for (size_t i = 0; i < seq.size(); ++i) {
        std::vector<RankList> groups;
        if (seq[i].is_event() && instances.ranks_by_stream(i).size() > 1) {
            for (const auto& [stream, ranks] : instances.ranks_by_stream(i)) {
                std::vector<Rank> sorted = ranks;
                std::sort(sorted.begin(), sorted.end());
                groups.push_back(RankList::from_sorted(sorted));
            }
        } else if (seq[i].is_loop() && seq[i].loop().iterations.is_per_rank() &&
                   contains_collective(seq[i].loop().body)) {
            for (const auto& entry : seq[i].loop().iterations.per_rank()) groups.push_back(entry.ranks);
        }
        if (groups.size() < 2) {
            out.push_back(std::move(seq[i]));
            continue;
        }
        for (auto& part : split_by(seq[i], groups)) out.push_back(std::move(part));
        pulled = true;
    }
    seq = std::move(out);
    return pulled;
}

// `weight_*`: how many times each side's sequence runs per rank (the product of the loops around it).
Sequence merge_aligned(Sequence a, Sequence b, uint64_t weight_a, uint64_t weight_b, const MergeContext& context)
{
    auto alignment = align_sequences(a, b, context);
    // Collectives must meet across ranks, or replay would split an instance among its members. When
    // both sides keep some apart because the ranks folded them into loops differently (ranks whose
    // inner loops differ), unroll the loops around collectives on both sides and align again: the
    // collectives then anchor the alignment one to one.
    const bool shared = context.share_unaligned;
    // A rank whose steps before its first collective joined its loop of steps (phase folding) and
    // one that had none fold E (X E)^n and (X E)^n into loops that cannot align: turned alike, they
    // meet.
    if (context.across == Across::ranks && collective_left(a, alignment.pairs, true, false) &&
        collective_left(b, alignment.pairs, false, false)) {
        const bool turned_a = has_cut_loop(b) && cut_collective_loops(a, context);
        const bool turned_b = has_cut_loop(a) && cut_collective_loops(b, context);
        if (turned_a || turned_b) alignment = align_sequences(a, b, context);
    }
    constexpr int kMostReorders = 4;
    int reorders = 0;
    while (context.across == Across::ranks) {
        const bool apart =
            collective_left(a, alignment.pairs, true, shared) && collective_left(b, alignment.pairs, false, shared);
        if (!apart && !alignment.conflict) break;
        // Instances of different communicators that the two sides hold in different orders: one side
        // follows the other's, where its ranks' orders allow.
        // (A few times: each realignment may pair other nodes, but never should go round in circles.)
        if (!alignment.crossing.empty() && reorders++ < kMostReorders && share_order(a, b, alignment.crossing)) {
            alignment = align_sequences(a, b, context);
            continue;
        }
        const bool unrolled_a = unroll_collective_loops(a);
        const bool unrolled_b = unroll_collective_loops(b);
        if (!unrolled_a && !unrolled_b) {
            const bool pulled_a = alignment.conflict && pull_apart(a);
            const bool pulled_b = alignment.conflict && pull_apart(b);
            if (!pulled_a && !pulled_b) break;
        }
        alignment = align_sequences(a, b, context);
    }
    // Within a rank a node one side lacks is optional. Across ranks it keeps its own participants,
    // except where it may become every rank's (MergeContext) and any rank may make its calls.
    const RankList ranks_a = shared ? collect_participants(a) : RankList();
    const RankList ranks_b = shared ? collect_participants(b) : RankList();
    const auto take = [&](Node node, uint64_t own, uint64_t other, bool from_a) {
        if (context.across == Across::iterations) return optional_node(std::move(node), own, other, context);
        if (!shared || !any_rank_may_call(node)) return node;
        return shared_optional_node(std::move(node), from_a ? ranks_a : ranks_b, own, from_a ? ranks_b : ranks_a, other,
                                    context);
    };
    Sequence out;
    out.reserve(a.size() + b.size() - alignment.pairs.size());
    size_t i = 0;
    size_t j = 0;
    for (const auto& [pa, pb] : alignment.pairs) {
        while (i < pa) out.push_back(take(std::move(a[i++]), weight_a, weight_b, true));
        while (j < pb) out.push_back(take(std::move(b[j++]), weight_b, weight_a, false));
        out.push_back(merge_nodes(std::move(a[i++]), std::move(b[j++]), weight_a, weight_b, context));
    }
    while (i < a.size()) out.push_back(take(std::move(a[i++]), weight_a, weight_b, true));
    while (j < b.size()) out.push_back(take(std::move(b[j++]), weight_b, weight_a, false));
    // Optional calls are those of one rank's steps (p = 0 only), or every rank's where shared.
    const bool optional_calls = context.across == Across::iterations
                                    ? may_merge_iterations(Value(1), Value(0), context.rule)
                                    : context.share_unaligned;
    if (optional_calls) join_optional_repeats(out, context);
    return out;
}

Node merge_nodes(Node a, Node b, uint64_t weight_a, uint64_t weight_b, const MergeContext& context)
{
    // An event aligned with a loop of that one event is that loop run once.
    if (a.is_event() != b.is_event()) {
        if (a.is_event()) a = as_loop(std::move(a));
        if (b.is_event()) b = as_loop(std::move(b));
    }
    if (a.is_event()) {
        Event& x = a.event();
        const Event& y = b.event();
        // Time statistics count an event's calls exactly, over all its ranks; per rank is what a
        // value stands for.
        const auto per_rank = [](const Event& e, uint64_t weight) {
            const auto ranks = static_cast<uint64_t>(std::max<int64_t>(e.ranks.size(), 1));
            return e.compute.count > 0 ? std::max<uint64_t>(e.compute.count / ranks, 1) : weight;
        };
        for (size_t i = 0; i < x.params.size(); ++i) {
            x.params[i].value = merged_value(x.params[i].value, x.ranks, per_rank(x, weight_a), y.params[i].value,
                                             y.ranks, per_rank(y, weight_b), x.params[i].role, context,
                                             role_is_peer(x.params[i].role));
        }
        x.signature = std::min(x.signature, y.signature);
        merge_compute(x, y, context.rule);
        x.ranks = x.ranks.unite(y.ranks);
        return a;
    }
    Loop& x = a.loop();
    Loop& y = b.loop();
    const uint64_t body_a = body_runs(x.iterations, weight_a);
    const uint64_t body_b = body_runs(y.iterations, weight_b);
    const bool has_rest = x.last_leaves_out > 0;
    const uint64_t rest_a = has_rest ? body_runs(x.iterations, weight_a, true) : 0;
    const uint64_t rest_b = has_rest ? body_runs(y.iterations, weight_b, true) : 0;
    const bool collectives = contains_collective(x.body) || contains_collective(y.body);
    x.iterations = merged_value(x.iterations, participants(a), weight_a, y.iterations, participants(b), weight_b,
                                Role::requests, context, !collectives);
    if (!has_rest) {
        x.body = merge_aligned(std::move(x.body), std::move(y.body), body_a, body_b, context);
    } else {
        // What the last iteration leaves out merges on its own (Aligner::align_bodies), weighted by
        // the runs it made.
        const auto split = [](Loop& loop) {
            const auto cut = loop.body.end() - static_cast<std::ptrdiff_t>(loop.last_leaves_out);
            Sequence rest(std::make_move_iterator(cut), std::make_move_iterator(loop.body.end()));
            loop.body.erase(cut, loop.body.end());
            return rest;
        };
        Sequence rest_x = split(x);
        Sequence rest_y = split(y);
        x.body = merge_aligned(std::move(x.body), std::move(y.body), body_a, body_b, context);
        Sequence rest = merge_aligned(std::move(rest_x), std::move(rest_y), rest_a, rest_b, context);
        x.last_leaves_out = static_cast<uint32_t>(rest.size());
        x.body.insert(x.body.end(), std::make_move_iterator(rest.begin()), std::make_move_iterator(rest.end()));
    }
    if (x.iterations.is_histogram()) draw_peers(x.body, context.rule);
    return a;
}

RankList collect_participants(const Sequence& seq)
{
    RankList out;
    collect_participants(seq, out);
    return out;
}

void collect_participants(const Sequence& seq, RankList& out)
{
    for (const auto& node : seq) {
        if (node.is_event()) {
            out = out.unite(node.event().ranks);
        } else {
            collect_participants(node.loop().body, out);
        }
    }
}

}  // namespace

bool cancels_requests(const Sequence& seq)
{
    return any_event(seq, [](const Event& e) { return operation_kind(e.op) == OperationKind::cancel; });
}

RankList participants(const Node& node)
{
    if (node.is_event()) return node.event().ranks;
    RankList out;
    collect_participants(node.loop().body, out);
    return out;
}

namespace {

// Whether every collective instance in `seq` has all members of its communicator, as far as the
// creations in sight tell them (the world's are `ranks`): each such event has them all, and a loop
// around one runs, for each participant, as many times as for the other members of its
// communicator. (A drawn count is drawn once for all participants.)
class WholenessCheck {
public:
    explicit WholenessCheck(const RankList& ranks) : world_(ranks.expand()) {}

    bool whole(const Sequence& seq)
    {
        for (const auto& node : seq) {
            if (node.is_event() ? !whole(node.event()) : !whole(node.loop())) return false;
        }
        return true;
    }

private:
    // The communicator `rank` names `id`, and its members (null where no creation in sight says).
    std::pair<uint64_t, const std::vector<Rank>*> communicator(Rank rank, int64_t id)
    {
        const uint64_t which = tracker_.communicator(rank, id);
        return {which, id == kWorldComm ? &world_ : tracker_.members(which)};
    }

    // Each communicator of an event once: its members are the same for all its participants.
    bool whole(const Event& e)
    {
        if (!is_collective(e)) return true;
        const Value* comm = e.find(Role::comm);
        if (comm == nullptr || comm->is_histogram()) return true;
        std::set<uint64_t> checked;
        for (Rank r : e.ranks.expand()) {
            const auto id = comm->value_for(r);
            if (!id) continue;
            const auto [which, members] = communicator(r, *id);
            if (members != nullptr && checked.insert(which).second) {
                for (Rank m : *members) {
                    if (!e.ranks.contains(m)) return false;
                }
            }
            tracker_.take_part(e, r);
        }
        return true;
    }

    bool whole(const Loop& loop)
    {
        if (loop.iterations.is_per_rank()) {
            bool alike = true;
            std::set<uint64_t> checked;
            any_event(loop.body, [&](const Event& e) {
                const Value* comm = e.find(Role::comm);
                if (!is_collective(e) || comm == nullptr) return false;
                for (Rank r : e.ranks.expand()) {
                    const auto id = comm->value_for(r);
                    if (!id) continue;
                    const auto [which, members] = communicator(r, *id);
                    if (members == nullptr || !checked.insert(which).second) continue;
                    for (Rank m : *members) alike = alike && loop.iterations.value_for(m) == loop.iterations.value_for(r);
                }
                return !alike;
            });
            if (!alike) return false;
        }
        return whole(loop.body);
    }

    std::vector<Rank> world_;
    StreamTracker tracker_;
};

}  // namespace

Sequence merge_ranks(Sequence a, Sequence b, const MergeRule& rule, bool job_cancels)
{
    const bool share = may_merge_iterations(Value(1), Value(0), rule) && !job_cancels;
    MergeContext context{rule, Across::ranks, 0, share};
    // Merging again with exact counts changes something only where a loop holds a collective.
    const auto loop_around_collective = [](const Sequence& seq) {
        return std::any_of(seq.begin(), seq.end(),
                           [](const Node& n) { return n.is_loop() && contains_collective(n.loop().body); });
    };
    if (!loop_around_collective(a) && !loop_around_collective(b)) {
        return merge_aligned(std::move(a), std::move(b), 1, 1, context);
    }
    const RankList ranks = collect_participants(a).unite(collect_participants(b));
    Sequence merged = merge_aligned(a, b, 1, 1, context);
    if (WholenessCheck(ranks).whole(merged)) return merged;
    // Counts merged where they should not have: align loops around collectives only where their
    // counts are equal, unrolling the others until the instances meet.
    context.exact_collective_counts = true;
    return merge_aligned(std::move(a), std::move(b), 1, 1, context);
}

Sequence merge_iterations(Sequence a, Sequence b, uint64_t weight_a, uint64_t weight_b, const MergeRule& rule,
                          Rank rank)
{
    return merge_aligned(std::move(a), std::move(b), weight_a, weight_b, MergeContext{rule, Across::iterations, rank});
}

std::pair<size_t, size_t> aligned_range(const Sequence& a, const Sequence& b, const MergeRule& rule)
{
    const auto alignment = align_sequences(a, b, MergeContext{rule, Across::iterations, 0});
    if (alignment.pairs.empty()) return {b.size(), 0};
    return {alignment.pairs.front().second, alignment.pairs.back().second + 1};
}

}  // namespace htrace
