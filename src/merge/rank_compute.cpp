#include "merge/rank_compute.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace htrace {
namespace {

using Groups = std::vector<RankCompute>;

Groups groups_of(const Event& e)
{
    return e.compute_by_rank.empty() ? Groups{{e.ranks, e.compute}} : Groups(e.compute_by_rank.begin(), e.compute_by_rank.end());
}

double calls_per_rank(const RankCompute& g)
{
    return double(g.compute.count) / double(std::max<int64_t>(g.ranks.size(), 1));
}

// Whether replay may give both groups one time: close means, or a difference too small to matter.
bool alike(const RankCompute& a, const RankCompute& b, const MergeRule& rule)
{
    if (a.compute.count == 0 || b.compute.count == 0) return true;
    const double difference = std::fabs(a.compute.mean - b.compute.mean);
    if (difference <= kComputeTolerance * std::max(std::fabs(a.compute.mean), std::fabs(b.compute.mean))) return true;
    return difference * std::max(calls_per_rank(a), calls_per_rank(b)) < rule.significant_compute_seconds;
}

void absorb(RankCompute& into, const RankCompute& from)
{
    into.ranks = into.ranks.unite(from.ranks);
    into.compute.merge(from.compute);
}

bool overlap(const RankList& a, const RankList& b)
{
    const std::vector<Rank> x = a.expand();
    for (Rank r : b.expand()) {
        if (std::binary_search(x.begin(), x.end(), r)) return true;
    }
    return false;
}

// Both sides' groups where some ranks are in both (two calls of one call site joined within a
// run): each rank's share of its group on each side, one group per rank.
Groups per_rank(const Groups& a, const Groups& b)
{
    std::map<Rank, TimeStats> of;
    for (const Groups* side : {&a, &b}) {
        for (const auto& g : *side) {
            const auto size = static_cast<uint64_t>(std::max<int64_t>(g.ranks.size(), 1));
            for (Rank r : g.ranks.expand()) of[r].merge(g.compute.share(1, size));
        }
    }
    Groups out;
    for (const auto& [rank, compute] : of) out.push_back({RankList(rank), compute});
    return out;
}

// Fewest groups: neighbours by mean that are alike merge, then the closest until few enough.
Groups coalesce(Groups groups, const MergeRule& rule)
{
    std::sort(groups.begin(), groups.end(),
              [](const RankCompute& a, const RankCompute& b) { return a.compute.mean < b.compute.mean; });
    Groups out;
    for (auto& g : groups) {
        if (!out.empty() && alike(out.back(), g, rule)) {
            absorb(out.back(), g);
        } else {
            out.push_back(std::move(g));
        }
    }
    while (out.size() > kMaxComputeGroups) {
        size_t closest = 0;
        double smallest = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i + 1 < out.size(); ++i) {
            const double ratio = out[i + 1].compute.mean / std::max(out[i].compute.mean, 1e-12);
            if (ratio < smallest) {
                smallest = ratio;
                closest = i;
            }
        }
        absorb(out[closest], out[closest + 1]);
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(closest) + 1);
    }
    return out.size() > 1 ? out : Groups{};
}

}  // namespace

void merge_compute(Event& into, const Event& from, const MergeRule& rule)
{
    const bool both_alike = into.compute_by_rank.empty() && from.compute_by_rank.empty() &&
                            alike({into.ranks, into.compute}, {from.ranks, from.compute}, rule);
    if (!both_alike) {
        Groups a = groups_of(into);
        const Groups b = groups_of(from);
        if (overlap(into.ranks, from.ranks)) {
            a = per_rank(a, b);
        } else {
            a.insert(a.end(), b.begin(), b.end());
        }
        into.compute_by_rank = coalesce(std::move(a), rule);
    }
    into.compute.merge(from.compute);
    into.in_call.merge(from.in_call);
}

}  // namespace htrace
