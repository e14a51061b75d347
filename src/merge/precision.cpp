#include "merge/precision.hpp"

#include "trace/completion_set.hpp"
#include "trace/walk.hpp"

#include <algorithm>
#include <cmath>

namespace htrace {
namespace {

struct Range {
    int64_t low;
    int64_t high;
};

Range range_of(const Value& v)
{
    if (v.is_exact()) return {v.exact(), v.exact()};
    if (v.is_histogram()) return {v.histogram().min().value, v.histogram().max().value};
    const auto [low, high] = v.per_rank_range();
    return {low, high};
}

bool ranges_may_merge(const Value& a, const Value& b, int precision)
{
    if (precision >= 100) return false;
    if (precision <= 0) return true;
    const Range x = range_of(a);
    const Range y = range_of(b);
    const long double low = std::min(x.low, y.low);
    const long double high = std::max(x.high, y.high);
    // The widest pair is the only one that can break the rule.
    const long double largest = std::max(std::fabs(low), std::fabs(high));
    return high - low <= (100 - precision) / 100.0L * largest;
}

void add_to(Histogram& h, const Value& v, Role role, uint64_t weight, Rank rank)
{
    if (v.is_exact()) {
        h.add(histogram_value(v.exact(), role), rank, std::max<uint64_t>(weight, 1));
    } else if (v.is_histogram()) {
        h.merge(v.histogram());
    } else {
        // Per-rank values stand for their ranks' calls: weight per rank.
        const uint64_t per_rank = std::max<uint64_t>(weight, 1);
        for (const auto& entry : v.per_rank()) {
            const auto ranks = static_cast<uint64_t>(std::max<int64_t>(entry.ranks.size(), 1));
            const Rank first = entry.ranks.empty() ? rank : entry.ranks.first();
            h.add(histogram_value(entry.value, role), first, per_rank * ranks);
        }
    }
}

}  // namespace

int64_t histogram_value(int64_t value, Role role)
{
    return role == Role::completed_set ? completed_set_as_oldest(value) : value;
}

bool may_merge(const Value& a, const Value& b, Role role, const MergeRule& rule)
{
    if (a == b) return true;
    if (role_is_categorical(role)) return false;
    return ranges_may_merge(a, b, rule.precision);
}

bool may_merge_iterations(const Value& a, const Value& b, const MergeRule& rule)
{
    return a == b || ranges_may_merge(a, b, rule.precision);
}

Value merge_values(Weighted a, Weighted b, Role role, const MergeRule& rule)
{
    if (a.value == b.value && !a.value.is_histogram()) return a.value;
    Histogram merged(a.value.is_histogram() ? a.value.histogram().config() : rule.histogram);
    // Endpoints keep every value seen, so that replay never invents a peer (starts empty: exact).
    if (role_is_peer(role)) merged.keep_seen_values();
    add_to(merged, a.value, role, a.weight, a.rank);
    add_to(merged, b.value, role, b.weight, b.rank);
    return Value(std::move(merged), a.value.alike_on_every_rank() && b.value.alike_on_every_rank());
}

Value as_histogram(Weighted v, Role role, const MergeRule& rule)
{
    Histogram histogram(rule.histogram);
    if (role_is_peer(role)) histogram.keep_seen_values();
    add_to(histogram, v.value, role, v.weight, v.rank);
    return Value(std::move(histogram), v.value.alike_on_every_rank());
}

uint64_t body_runs(const Value& iterations, uint64_t runs, bool but_last)
{
    // Each iteration, or one fewer where the loop runs at all.
    const auto per_instance = [but_last](int64_t count) {
        return static_cast<double>(but_last ? std::max<int64_t>(count - 1, 0) : count);
    };
    double per_run = 0;
    if (iterations.is_exact()) {
        per_run = per_instance(iterations.exact());
    } else if (iterations.is_histogram()) {
        per_run = but_last ? iterations_but_last(iterations.histogram()) : iterations.histogram().mean();
    } else {
        // Per rank, on average over the ranks (a loop only some ranks run counts 0 on the others).
        double sum = 0;
        double ranks = 0;
        for (const auto& entry : iterations.per_rank()) {
            sum += per_instance(entry.value) * static_cast<double>(entry.ranks.size());
            ranks += static_cast<double>(entry.ranks.size());
        }
        per_run = ranks > 0 ? sum / ranks : 0;
    }
    return static_cast<uint64_t>(std::max<long long>(std::llround(per_run * static_cast<double>(runs)), 1));
}

double significant_compute_seconds(double traced_seconds)
{
    constexpr double kShareOfRun = 0.01;
    constexpr double kLeast = 1e-3;
    return std::max(kShareOfRun * traced_seconds, kLeast);
}

}  // namespace htrace
