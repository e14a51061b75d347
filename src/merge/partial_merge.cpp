#include "merge/partial_merge.hpp"

#include "merge/precision.hpp"
#include "merge/rank_merge.hpp"
#include "trace/rank_times.hpp"

#include <algorithm>
#include <numeric>
#include <set>

namespace htrace {
namespace {

// Whether two parts can be of one run: what the ranks agreed on at MPI_Init.
std::string differs(const TraceHeader& a, const TraceHeader& b)
{
    if (a.run_id != b.run_id) return "is of another run (id " + format_run_id(b.run_id) + ", not " + format_run_id(a.run_id) + ")";
    if (a.ranks != b.ranks) return "has " + std::to_string(b.ranks) + " ranks, not " + std::to_string(a.ranks);
    if (a.precision != b.precision || a.histogram.bins != b.histogram.bins ||
        a.histogram.rebalance_interval != b.histogram.rebalance_interval) {
        return "was traced with other merge settings";
    }
    return {};
}

}  // namespace

PartsMergeResult merge_parts(std::vector<Trace> parts, const std::vector<std::string>& names)
{
    if (parts.empty()) return {std::nullopt, "no partial files given"};
    std::set<Rank> present;
    for (size_t i = 0; i < parts.size(); ++i) {
        const TraceHeader& h = parts[i].header;
        if (!h.incomplete()) return {std::nullopt, names[i] + ": a complete trace, not a partial file"};
        if (const std::string problem = differs(parts[0].header, h); !problem.empty()) {
            return {std::nullopt, names[i] + ": " + problem};
        }
        for (const RankStop& stop : h.stops) {
            if (stop.rank < 0 || stop.rank >= h.ranks) {
                return {std::nullopt, names[i] + ": rank " + std::to_string(stop.rank) + " is not a rank of the job"};
            }
            if (!present.insert(stop.rank).second) {
                return {std::nullopt, names[i] + ": rank " + std::to_string(stop.rank) + " is in another part too"};
            }
        }
    }
    // In rank order, as the tree at MPI_Finalize keeps lower ranks' events first where order is free.
    std::vector<size_t> order(parts.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(),
              [&](size_t a, size_t b) { return parts[a].header.stops.front().rank < parts[b].header.stops.front().rank; });

    Trace merged;
    merged.header = parts[order.front()].header;
    merged.header.stops.clear();
    MergeRule rule{merged.header.precision, merged.header.histogram};
    bool cancels = false;
    merged.header.rank_times.reset();
    uint64_t timed_ranks = 0;
    for (const Trace& part : parts) {
        merged.header.rank_times = timed_ranks == 0 ? part.header.rank_times
                                                    : combine(merged.header.rank_times, timed_ranks,
                                                              part.header.rank_times, part.header.stops.size());
        timed_ranks += part.header.stops.size();
        merged.header.traced_seconds = std::max(merged.header.traced_seconds, part.header.traced_seconds);
        merged.header.start_time = std::min(merged.header.start_time, part.header.start_time);
        cancels = cancels || cancels_requests(part.body);
    }
    rule.significant_compute_seconds = significant_compute_seconds(merged.header.traced_seconds);
    merged.body.clear();
    bool first = true;
    for (size_t i : order) {
        Trace& part = parts[i];
        merged.header.stops.insert(merged.header.stops.end(), part.header.stops.begin(), part.header.stops.end());
        merged.header.file_names.insert(part.header.file_names.begin(), part.header.file_names.end());
        merged.header.topologies.insert(part.header.topologies.begin(), part.header.topologies.end());
        merged.locations.insert(part.locations.begin(), part.locations.end());
        merged.body = first ? std::move(part.body) : merge_ranks(std::move(merged.body), std::move(part.body), rule, cancels);
        first = false;
    }
    std::sort(merged.header.stops.begin(), merged.header.stops.end(),
              [](const RankStop& a, const RankStop& b) { return a.rank < b.rank; });
    return {std::move(merged), {}};
}

}  // namespace htrace
