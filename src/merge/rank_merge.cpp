#include "merge/rank_merge.hpp"

#include "merge/loop_folding.hpp"

#include <algorithm>
#include <map>
#include <utility>

namespace htrace {
namespace {

// Sequences longer than this are aligned window by window (near-linear for similar traces).
constexpr size_t kAlignWindow = 384;

// Collectives and communicator creations: every member of the communicator takes part in the same
// instance, so replay needs them as one event for all of its members.
bool is_collective(const Event& e)
{
    const OperationKind kind = operation_kind(e.op);
    return kind == OperationKind::collective || kind == OperationKind::comm_create;
}

bool contains_collective(const Sequence& seq)
{
    for (const auto& node : seq) {
        if (node.is_event() ? is_collective(node.event()) : contains_collective(node.loop().body)) return true;
    }
    return false;
}

bool same_roles(const Event& a, const Event& b)
{
    if (a.params.size() != b.params.size()) return false;
    for (size_t i = 0; i < a.params.size(); ++i) {
        if (a.params[i].role != b.params[i].role) return false;
    }
    return true;
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
    return ca != nullptr && cb != nullptr && *ca == *cb;
}

std::vector<PerRankValue> as_per_rank(const Value& v, const RankList& ranks)
{
    if (v.is_per_rank()) return v.per_rank();
    return {PerRankValue{v.exact(), ranks}};
}

// Both sides' values as one: a histogram where the rule allows merging them, else kept per rank
// (lossless). `calls_*` is how many calls (or loop instances) each side's value stands for, per rank.
Value combine(const Value& a, const RankList& ranks_a, uint64_t calls_a, const Value& b, const RankList& ranks_b,
              uint64_t calls_b, Role role, const MergeRule& rule)
{
    if (a == b && a.is_exact()) return a;
    if (role == Role::requests ? may_merge_iterations(a, b, rule) : may_merge(a, b, role, rule)) {
        const auto first = [](const RankList& r) { return r.empty() ? Rank{0} : r.runs().front().start; };
        // As per-rank values, an exact value counts once for each of its ranks.
        const auto spread = [](const Value& v, const RankList& r) { return v.is_exact() ? Value(as_per_rank(v, r)) : v; };
        return merge_values({spread(a, ranks_a), calls_a, first(ranks_a)}, {spread(b, ranks_b), calls_b, first(ranks_b)},
                            role, rule);
    }
    std::map<int64_t, RankList> by_value;
    for (const auto& side : {as_per_rank(a, ranks_a), as_per_rank(b, ranks_b)}) {
        for (const auto& entry : side) {
            auto [it, inserted] = by_value.try_emplace(entry.value, entry.ranks);
            if (!inserted) it->second = it->second.unite(entry.ranks);
        }
    }
    if (by_value.size() == 1) return Value(by_value.begin()->first);
    std::vector<PerRankValue> entries;
    for (auto& [value, ranks] : by_value) entries.push_back({value, std::move(ranks)});
    return Value(std::move(entries));
}

// Whether two values can become one: merged under the rule, or kept per rank (not a histogram).
bool combinable(const Value& a, const Value& b, Role role, const MergeRule& rule)
{
    if (role == Role::requests ? may_merge_iterations(a, b, rule) : may_merge(a, b, role, rule)) return true;
    return !a.is_histogram() && !b.is_histogram();
}

// Two events from the same call site with the same values: aligning them is never worse.
bool same_call(const Node& a, const Node& b)
{
    if (!a.is_event() || !b.is_event()) return false;
    const Event& x = a.event();
    const Event& y = b.event();
    return x.op == y.op && x.signature == y.signature && x.params == y.params;
}

// Whether the alignment leaves a collective of one side (or a loop holding one) unpaired.
bool collective_left(const Sequence& seq, const std::vector<std::pair<size_t, size_t>>& pairs, bool first)
{
    std::vector<char> aligned(seq.size(), 0);
    for (const auto& pair : pairs) aligned[first ? pair.first : pair.second] = 1;
    for (size_t i = 0; i < seq.size(); ++i) {
        if (aligned[i]) continue;
        const Node& node = seq[i];
        if (node.is_event() ? is_collective(node.event()) : contains_collective(node.loop().body)) return true;
    }
    return false;
}

class Aligner {
public:
    explicit Aligner(const MergeRule& rule) : rule_(rule) {}

    // Weight of aligning a with b (0: they cannot align).
    double weight(const Node& a, const Node& b)
    {
        if (a.is_event() != b.is_event()) return 0;
        if (a.is_event()) {
            const Event& x = a.event();
            const Event& y = b.event();
            if (!events_align(x, y)) return 0;
            for (size_t i = 0; i < x.params.size(); ++i) {
                if (!combinable(x.params[i].value, y.params[i].value, x.params[i].role, rule_)) return 0;
            }
            // Collectives weigh more: leaving one unaligned would split an instance in replay.
            return is_collective(x) ? 4.0 : 1.0;
        }
        const Loop& x = a.loop();
        const Loop& y = b.loop();
        if (!(x.iterations == y.iterations)) {
            if (!combinable(x.iterations, y.iterations, Role::requests, rule_)) return 0;
            // Ranks that iterate different numbers of times cannot share a collective instance; a
            // histogram count is drawn once for all of them in replay, so it can.
            const bool one_count = may_merge_iterations(x.iterations, y.iterations, rule_);
            if (!one_count && (contains_collective(x.body) || contains_collective(y.body))) return 0;
        }
        auto key = std::make_pair(&a, &b);
        auto found = loop_weights_.find(key);
        if (found != loop_weights_.end()) return found->second;
        // Loops whose bodies keep a collective apart do not align: the collective's instances
        // would be split between them (ranks that fold the same phase into loops differently).
        // Left apart, they are unrolled until the collectives meet (merge_aligned).
        const Alignment body = align(x.body, y.body);
        const double w = collective_left(x.body, body.pairs, true) || collective_left(y.body, body.pairs, false)
                             ? 0
                             : body.weight;
        loop_weights_[key] = w;
        return w;
    }

    struct Alignment {
        std::vector<std::pair<size_t, size_t>> pairs;
        double weight = 0;
    };

    Alignment align(const Sequence& a, const Sequence& b) { return align(a, 0, a.size(), b, 0, b.size()); }

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
    Alignment align_window(const Sequence& a, size_t ia, size_t na, const Sequence& b, size_t ib, size_t nb)
    {
        // Classic LCS table with weights; ties prefer skipping in `a` first so that, between
        // aligned pairs, each side keeps its order.
        std::vector<double> table((na + 1) * (nb + 1), 0.0);
        auto at = [&](size_t x, size_t y) -> double& { return table[x * (nb + 1) + y]; };
        for (size_t x = na; x-- > 0;) {
            for (size_t y = nb; y-- > 0;) {
                double best = std::max(at(x + 1, y), at(x, y + 1));
                const double w = weight(a[ia + x], b[ib + y]);
                if (w > 0) best = std::max(best, w + at(x + 1, y + 1));
                at(x, y) = best;
            }
        }
        Alignment out;
        size_t x = 0;
        size_t y = 0;
        while (x < na && y < nb) {
            const double w = weight(a[ia + x], b[ib + y]);
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

    MergeRule rule_;
    std::map<std::pair<const Node*, const Node*>, double> loop_weights_;
};

Node merge_nodes(Node a, Node b, uint64_t weight_a, uint64_t weight_b, const MergeRule& rule);

// Loops unrolled to let collectives meet stay below this many nodes.
constexpr size_t kMaxUnrolledNodes = 4096;

size_t nested_size(const Sequence& seq)
{
    size_t n = 0;
    for (const auto& node : seq) n += 1 + (node.is_loop() ? nested_size(node.loop().body) : 0);
    return n;
}

// One iteration's share of a loop's statistics: the copies together stand for what the loop did.
void scale_counts(Sequence& seq, uint64_t iterations)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            scale_counts(node.loop().body, iterations);
            continue;
        }
        TimeStats& t = node.event().compute;
        t.count = std::max<uint64_t>(t.count / iterations, t.count > 0 ? 1 : 0);
        t.m2 /= static_cast<double>(iterations);
    }
}

// Unrolls every loop of `seq` that holds a collective and has an exact count; returns whether it
// unrolled any.
bool unroll_collective_loops(Sequence& seq)
{
    Sequence out;
    bool unrolled = false;
    for (size_t i = 0; i < seq.size(); ++i) {
        Node& node = seq[i];
        const bool candidate = node.is_loop() && node.loop().iterations.is_exact() &&
                               contains_collective(node.loop().body) &&
                               static_cast<size_t>(node.loop().iterations.exact()) * nested_size(node.loop().body) <=
                                   kMaxUnrolledNodes;
        if (!candidate) {
            out.push_back(std::move(node));
            continue;
        }
        const auto iterations = static_cast<uint64_t>(node.loop().iterations.exact());
        Sequence body = std::move(node.loop().body);
        scale_counts(body, std::max<uint64_t>(iterations, 1));
        for (uint64_t k = 0; k < iterations; ++k) out.insert(out.end(), body.begin(), body.end());
        unrolled = true;
    }
    seq = std::move(out);
    return unrolled;
}

std::vector<size_t> top_level_collectives(const Sequence& seq)
{
    std::vector<size_t> out;
    for (size_t i = 0; i < seq.size(); ++i) {
        if (seq[i].is_event() && is_collective(seq[i].event())) out.push_back(i);
    }
    return out;
}

// Collectives are forced to meet: where both sides hold the same collectives at their top level, the
// k-th of one aligns with the k-th of the other, and only the stretches between them are matched by
// weight. (Weights alone may prefer a shifted pairing that lines up more point-to-point calls.)
Aligner::Alignment align_sequences(const Sequence& a, const Sequence& b, const MergeRule& rule)
{
    // A fresh aligner each time: its cache is keyed by node addresses, which moving frees.
    Aligner aligner(rule);
    const auto anchors_a = top_level_collectives(a);
    const auto anchors_b = top_level_collectives(b);
    bool anchored = !anchors_a.empty() && anchors_a.size() == anchors_b.size();
    for (size_t k = 0; anchored && k < anchors_a.size(); ++k) {
        anchored = aligner.weight(a[anchors_a[k]], b[anchors_b[k]]) > 0;
    }
    if (!anchored) return aligner.align(a, b);
    Aligner::Alignment out;
    size_t i = 0;
    size_t j = 0;
    for (size_t k = 0; k <= anchors_a.size(); ++k) {
        const size_t end_a = k < anchors_a.size() ? anchors_a[k] : a.size();
        const size_t end_b = k < anchors_b.size() ? anchors_b[k] : b.size();
        const auto between = aligner.align(a, i, end_a, b, j, end_b);
        out.pairs.insert(out.pairs.end(), between.pairs.begin(), between.pairs.end());
        out.weight += between.weight;
        if (k == anchors_a.size()) break;
        out.pairs.emplace_back(end_a, end_b);
        out.weight += aligner.weight(a[end_a], b[end_b]);
        i = end_a + 1;
        j = end_b + 1;
    }
    return out;
}

// `weight_*`: how many times each side's sequence runs per rank (the product of the loops around it).
Sequence merge_aligned(Sequence a, Sequence b, uint64_t weight_a, uint64_t weight_b, const MergeRule& rule)
{
    auto alignment = align_sequences(a, b, rule);
    // Collectives must meet across ranks, or replay would split an instance among its members. When
    // both sides keep some apart because the ranks folded them into loops differently (ranks whose
    // inner loops differ), unroll the loops around collectives on both sides and align again: the
    // collectives then anchor the alignment one to one.
    for (;;) {
        if (!collective_left(a, alignment.pairs, true) || !collective_left(b, alignment.pairs, false)) break;
        const bool unrolled_a = unroll_collective_loops(a);
        const bool unrolled_b = unroll_collective_loops(b);
        if (!unrolled_a && !unrolled_b) break;
        alignment = align_sequences(a, b, rule);
    }
    Sequence out;
    out.reserve(a.size() + b.size() - alignment.pairs.size());
    size_t i = 0;
    size_t j = 0;
    for (const auto& [pa, pb] : alignment.pairs) {
        while (i < pa) out.push_back(std::move(a[i++]));
        while (j < pb) out.push_back(std::move(b[j++]));
        out.push_back(merge_nodes(std::move(a[i++]), std::move(b[j++]), weight_a, weight_b, rule));
    }
    while (i < a.size()) out.push_back(std::move(a[i++]));
    while (j < b.size()) out.push_back(std::move(b[j++]));
    return out;
}

Node merge_nodes(Node a, Node b, uint64_t weight_a, uint64_t weight_b, const MergeRule& rule)
{
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
            x.params[i].value = combine(x.params[i].value, x.ranks, per_rank(x, weight_a), y.params[i].value, y.ranks,
                                        per_rank(y, weight_b), x.params[i].role, rule);
        }
        x.signature = std::min(x.signature, y.signature);
        x.ranks = x.ranks.unite(y.ranks);
        x.compute.merge(y.compute);
        return a;
    }
    Loop& x = a.loop();
    Loop& y = b.loop();
    const uint64_t body_a = weight_a * expected_iterations(x.iterations);
    const uint64_t body_b = weight_b * expected_iterations(y.iterations);
    x.iterations = combine(x.iterations, participants(a), weight_a, y.iterations, participants(b), weight_b,
                           Role::requests, rule);
    x.body = merge_aligned(std::move(x.body), std::move(y.body), body_a, body_b, rule);
    return a;
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

RankList participants(const Node& node)
{
    if (node.is_event()) return node.event().ranks;
    RankList out;
    collect_participants(node.loop().body, out);
    return out;
}

Sequence merge_ranks(Sequence a, Sequence b, const MergeRule& rule)
{
    return merge_aligned(std::move(a), std::move(b), 1, 1, rule);
}

}  // namespace htrace
