#include "merge/split_ranks.hpp"

#include <algorithm>
#include <iterator>

namespace htrace {
namespace {

Value restrict_value(const Value& v, const RankList& keep)
{
    if (!v.is_per_rank()) return v;
    std::vector<PerRankValue> entries;
    for (const auto& entry : v.per_rank()) {
        RankList kept = intersect(entry.ranks, keep);
        if (!kept.empty()) entries.push_back({entry.value, std::move(kept)});
    }
    if (entries.size() == 1) return Value(entries.front().value);
    return Value(entries);
}

// The time statistics of `part` of `whole` ranks that computed alike.
TimeStats ranks_share(const TimeStats& t, int64_t part, int64_t whole)
{
    return t.share(static_cast<uint64_t>(std::max<int64_t>(part, 0)), static_cast<uint64_t>(std::max<int64_t>(whole, 1)));
}

std::optional<Event> restrict_event(const Event& e, const RankList& keep)
{
    RankList ranks = intersect(e.ranks, keep);
    if (ranks.empty()) return std::nullopt;
    Event out;
    out.op = e.op;
    out.signature = e.signature;
    for (const auto& p : e.params) out.params.push_back({p.role, restrict_value(p.value, ranks)});
    out.compute = ranks_share(e.compute, ranks.size(), e.ranks.size());
    out.in_call = ranks_share(e.in_call, ranks.size(), e.ranks.size());
    for (const auto& group : e.compute_by_rank) {
        RankList kept = intersect(group.ranks, ranks);
        if (!kept.empty()) out.compute_by_rank.push_back({kept, ranks_share(group.compute, kept.size(), group.ranks.size())});
    }
    if (out.compute_by_rank.size() == 1) {
        out.compute = out.compute_by_rank.front().compute;
        out.compute_by_rank.clear();
    } else if (!out.compute_by_rank.empty()) {
        out.compute = TimeStats{};
        for (const auto& group : out.compute_by_rank) out.compute.merge(group.compute);
    }
    out.ranks = std::move(ranks);
    return out;
}

}  // namespace

RankList intersect(const RankList& a, const RankList& b)
{
    const std::vector<Rank> x = a.expand();
    const std::vector<Rank> y = b.expand();
    std::vector<Rank> both;
    std::set_intersection(x.begin(), x.end(), y.begin(), y.end(), std::back_inserter(both));
    return RankList::from_sorted(both);
}

std::optional<Node> restrict_to(const Node& node, const RankList& keep)
{
    if (node.is_event()) {
        auto e = restrict_event(node.event(), keep);
        if (!e) return std::nullopt;
        return Node{std::move(*e)};
    }
    const Loop& loop = node.loop();
    Loop out;
    out.iterations = restrict_value(loop.iterations, keep);
    const size_t cut = loop.body.size() - std::min<size_t>(loop.last_leaves_out, loop.body.size());
    for (size_t i = 0; i < loop.body.size(); ++i) {
        auto inner = restrict_to(loop.body[i], keep);
        if (!inner) continue;
        out.body.push_back(std::move(*inner));
        if (i >= cut) ++out.last_leaves_out;
    }
    if (out.body.empty()) return std::nullopt;
    return Node{std::move(out)};
}

Sequence split_by(const Node& node, const std::vector<RankList>& groups)
{
    Sequence parts;
    for (const RankList& group : groups) {
        if (auto part = restrict_to(node, group)) parts.push_back(std::move(*part));
    }
    return parts;
}

}  // namespace htrace
