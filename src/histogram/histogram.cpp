#include "histogram/histogram.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <numeric>
#include <tuple>
#include <utility>

namespace htrace {

namespace {

using Bin = Histogram::Bin;
using Extreme = Histogram::Extreme;

std::uint64_t distance(std::int64_t a, std::int64_t b) {
    // Unsigned arithmetic: the difference of two int64 values may not fit in an int64.
    return a < b ? static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)
                 : static_cast<std::uint64_t>(a) - static_cast<std::uint64_t>(b);
}

// base + offset for offset <= distance(base, INT64_MAX), without signed overflow.
std::int64_t offset_from(std::int64_t base, std::uint64_t offset) {
    return static_cast<std::int64_t>(static_cast<std::uint64_t>(base) + offset);
}

double width_of(const Bin& bin) {
    return static_cast<double>(distance(bin.min, bin.max));
}

// Chan et al.'s parallel formula: the moments of the union of two groups, exact up to rounding.
// Means are taken relative to the union's min, so only differences of nearby values are rounded.
Bin combined(const Bin& a, const Bin& b) {
    Bin out;
    out.count = a.count + b.count;
    out.min = std::min(a.min, b.min);
    out.max = std::max(a.max, b.max);
    const double mean_a = static_cast<double>(distance(out.min, a.min)) + a.mean_offset;
    const double mean_b = static_cast<double>(distance(out.min, b.min)) + b.mean_offset;
    const double share_b = static_cast<double>(b.count) / static_cast<double>(out.count);
    const double delta = mean_b - mean_a;
    // Rounding may put the mean an ulp outside the range; bins promise it lies inside.
    out.mean_offset = std::clamp(mean_a + delta * share_b, 0.0, width_of(out));
    out.m2 = a.m2 + b.m2 + delta * delta * (static_cast<double>(a.count) * share_b);
    return out;
}

bool lower(const Extreme& a, const Extreme& b) {
    return a.value < b.value || (a.value == b.value && a.rank < b.rank);
}

bool higher(const Extreme& a, const Extreme& b) {
    return a.value > b.value || (a.value == b.value && a.rank < b.rank);
}

// The bin's mean rounded to the nearest integer inside its range (halves round up: offsets are >= 0).
std::int64_t rounded_mean(const Bin& bin) {
    const double offset = std::round(bin.mean_offset);
    if (!(offset > 0.0))
        return bin.min;
    if (!(offset < width_of(bin)))
        return bin.max;
    return offset_from(bin.min, static_cast<std::uint64_t>(offset));
}

// Index of the left bin of the neighbouring pair with the smallest combined count (ties: leftmost).
std::size_t lightest_pair(const std::vector<Bin>& bins) {
    assert(bins.size() >= 2);
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < bins.size(); ++i)
        if (bins[i].count + bins[i + 1].count < bins[best].count + bins[best + 1].count)
            best = i;
    return best;
}

void join_with_next(std::vector<Bin>& bins, std::size_t i) {
    bins[i] = combined(bins[i], bins[i + 1]);
    bins.erase(bins.begin() + static_cast<std::ptrdiff_t>(i) + 1);
}

// Splits a bin into a lower and an upper half whose union has the bin's count, mean and m2. The halves
// take n/2 and n - n/2 values and means spread around the bin's mean as far as uniformly spread values
// would put them, within what m2 allows and inside their ranges [min, s] and [s + 1, max].
// The split point s stays away from the ends, so neither half claims to hold a single value: a
// single-valued bin must be exact. Hence bins spanning fewer than 4 integers do not split.
// All positions are offsets from the bin's min.
std::optional<std::pair<Bin, Bin>> split(const Bin& bin) {
    const std::uint64_t width = distance(bin.min, bin.max);
    if (bin.count < 2 || bin.max < bin.min || width < 3)
        return std::nullopt;
    const std::uint64_t count1 = bin.count / 2;
    const std::uint64_t count2 = bin.count - count1;
    const double n = static_cast<double>(bin.count);
    const double n1 = static_cast<double>(count1);
    const double n2 = static_cast<double>(count2);
    const double m = bin.mean_offset;
    const double high = static_cast<double>(width);

    // s = floor(mean), kept in [1, width - 2].
    const double floor_m = std::floor(m);
    std::uint64_t s = 1;
    if (floor_m >= static_cast<double>(width - 2))
        s = width - 2;
    else if (floor_m > 1.0)
        s = static_cast<std::uint64_t>(floor_m);
    const double sd = static_cast<double>(s);

    // mean1 = m - d*n2/n and mean2 = m + d*n1/n keep n1*mean1 + n2*mean2 = n*m for any spread d; the
    // between-halves part of m2 is n1*n2/n*d^2.
    const double d_low = std::max({0.0, (m - sd) * n / n2, (sd + 1.0 - m) * n / n1});
    const double d_high = std::min({m * n / n2, (high - m) * n / n1, std::sqrt(bin.m2 * n / (n1 * n2))});
    if (!(d_low <= d_high))
        return std::nullopt;
    // Uniformly spread values put 3/4 of m2 between the two halves.
    const double d = std::clamp(std::sqrt(0.75 * bin.m2 * n / (n1 * n2)), d_low, d_high);
    const double mean1 = std::clamp(m - d * n2 / n, 0.0, sd);
    const double mean2 = std::clamp(m + d * n1 / n, sd + 1.0, high);
    const double between = n1 * n2 / n * (mean2 - mean1) * (mean2 - mean1);
    const double within = std::max(0.0, bin.m2 - between) / 2.0;
    const std::int64_t upper_min = offset_from(bin.min, s + 1);
    return std::pair{Bin{count1, bin.min, offset_from(bin.min, s), mean1, within},
                     Bin{count2, upper_min, bin.max, mean2 - (sd + 1.0), within}};
}

}  // namespace

Histogram::Histogram(HistogramConfig config) : config_(config) {
    assert(config_.valid());
}

std::optional<Histogram> Histogram::from_parts(HistogramConfig config, std::vector<Bin> bins, Extreme min,
                                               Extreme max,
                                               std::optional<std::vector<std::int64_t>> seen_values,
                                               std::uint32_t added_since_rebalance) {
    if (!config.valid() || bins.size() > config.bins || added_since_rebalance >= config.rebalance_interval)
        return std::nullopt;
    for (std::size_t i = 0; i < bins.size(); ++i) {
        const Bin& bin = bins[i];
        if (bin.count == 0 || bin.min > bin.max || !(bin.mean_offset >= 0.0) ||
            !(bin.mean_offset <= width_of(bin)) || !(bin.m2 >= 0.0) || !std::isfinite(bin.m2))
            return std::nullopt;
        if (bin.min == bin.max && bin.m2 != 0.0)  // a single-valued bin claims to be exact
            return std::nullopt;
        if (i > 0 && bins[i - 1].max >= bin.min)
            return std::nullopt;
    }
    if (bins.empty()) {
        if (min != Extreme{} || max != Extreme{})
            return std::nullopt;
    } else if (min.value != bins.front().min || max.value != bins.back().max) {
        return std::nullopt;
    }
    if (seen_values) {
        const std::vector<std::int64_t>& seen = *seen_values;
        if (std::adjacent_find(seen.begin(), seen.end(), std::greater_equal<>{}) != seen.end())
            return std::nullopt;
        if (seen.empty() != bins.empty())
            return std::nullopt;
        if (!seen.empty() && (seen.front() != min.value || seen.back() != max.value))
            return std::nullopt;
    }

    Histogram histogram(config);
    histogram.bins_ = std::move(bins);
    histogram.min_ = min;
    histogram.max_ = max;
    histogram.keeps_seen_ = seen_values.has_value();
    if (seen_values)
        histogram.seen_ = std::move(*seen_values);
    histogram.added_since_rebalance_ = added_since_rebalance;
    return histogram;
}

bool Histogram::keep_seen_values() {
    if (keeps_seen_)
        return true;
    std::optional<std::vector<std::int64_t>> values = distinct_values();
    if (!values)
        return false;
    seen_ = std::move(*values);
    keeps_seen_ = true;
    return true;
}

void Histogram::add(std::int64_t value, std::int32_t rank, std::uint64_t weight) {
    assert(weight > 0);
    if (weight == 0)
        return;
    note_extremes({value, rank}, {value, rank});
    if (keeps_seen_) {
        const auto at = std::lower_bound(seen_.begin(), seen_.end(), value);
        if (at == seen_.end() || *at != value)
            seen_.insert(at, value);
    }

    const Bin single{weight, value, value, 0.0, 0.0};
    const auto next = std::lower_bound(bins_.begin(), bins_.end(), value,
                                       [](const Bin& bin, std::int64_t v) { return bin.max < v; });
    if (next != bins_.end() && next->min <= value) {
        *next = combined(*next, single);
    } else if (bins_.size() < config_.bins) {
        bins_.insert(next, single);
    } else {
        // All bins in use: the value joins the bin whose range is nearest (ties: the lower bin).
        auto target = next;
        if (next == bins_.end() ||
            (next != bins_.begin() && distance(std::prev(next)->max, value) <= distance(value, next->min)))
            target = std::prev(next);
        *target = combined(*target, single);
    }
    count_towards_rebalance(weight);
}

void Histogram::merge(const Histogram& other) {
    if (&other == this) {
        const Histogram copy = other;
        merge(copy);
        return;
    }
    assert(config_ == other.config_);

    // Before the bins change: whether an input is exact decides what it contributes to the seen set.
    if (keeps_seen_ || other.keeps_seen_) {
        const std::optional<std::vector<std::int64_t>> mine = distinct_values();
        const std::optional<std::vector<std::int64_t>> theirs = other.distinct_values();
        seen_.clear();
        keeps_seen_ = mine && theirs;
        if (keeps_seen_)
            std::set_union(mine->begin(), mine->end(), theirs->begin(), theirs->end(),
                           std::back_inserter(seen_));
    }

    if (!other.empty())
        note_extremes(other.min_, other.max_);

    // A total order on bins makes the result independent of which input is `this`.
    std::vector<Bin> all = bins_;
    all.insert(all.end(), other.bins_.begin(), other.bins_.end());
    std::sort(all.begin(), all.end(), [](const Bin& a, const Bin& b) {
        return std::tie(a.min, a.max, a.count, a.mean_offset, a.m2) <
               std::tie(b.min, b.max, b.count, b.mean_offset, b.m2);
    });
    bins_.clear();
    for (const Bin& bin : all) {
        if (!bins_.empty() && bin.min <= bins_.back().max)
            bins_.back() = combined(bins_.back(), bin);
        else
            bins_.push_back(bin);
    }
    while (bins_.size() > config_.bins)
        join_with_next(bins_, lightest_pair(bins_));

    added_since_rebalance_ = static_cast<std::uint32_t>(
        (std::uint64_t{added_since_rebalance_} + other.added_since_rebalance_) % config_.rebalance_interval);
}

bool Histogram::take_away(std::int64_t value, std::uint64_t weight) {
    const auto bin = std::find_if(bins_.begin(), bins_.end(),
                                  [&](const Bin& b) { return b.min == value && b.max == value; });
    if (bin == bins_.end() || bin->count <= weight)
        return false;
    bin->count -= weight;
    return true;
}

std::uint64_t Histogram::count() const noexcept {
    std::uint64_t total = 0;
    for (const Bin& bin : bins_)
        total += bin.count;
    return total;
}

double Histogram::mean() const noexcept {
    if (bins_.empty())
        return 0.0;
    return std::accumulate(bins_.begin() + 1, bins_.end(), bins_.front(), combined).mean();
}

double Histogram::variance() const noexcept {
    if (bins_.empty())
        return 0.0;
    const Bin all = std::accumulate(bins_.begin() + 1, bins_.end(), bins_.front(), combined);
    return all.m2 / static_cast<double>(all.count);
}

bool Histogram::exact() const noexcept {
    return std::all_of(bins_.begin(), bins_.end(), [](const Bin& bin) { return bin.min == bin.max; });
}

std::size_t Histogram::bin_at(std::uint64_t position) const {
    for (std::size_t i = 0; i < bins_.size(); ++i) {
        if (position < bins_[i].count)
            return i;
        position -= bins_[i].count;
    }
    assert(false && "position beyond count()");
    return bins_.size() - 1;
}

std::int64_t Histogram::value_of(const Bin& bin) const {
    const std::int64_t rounded = rounded_mean(bin);
    if (!keeps_seen_ || seen_.empty())
        return rounded;
    // The seen values nearest to `rounded` from above and from below, preferring those inside the bin.
    const auto above = std::lower_bound(seen_.begin(), seen_.end(), rounded);
    const bool above_in_bin = above != seen_.end() && *above <= bin.max;
    const bool below_in_bin = above != seen_.begin() && *std::prev(above) >= bin.min;
    bool use_above = above != seen_.end();
    bool use_below = above != seen_.begin();
    if (above_in_bin || below_in_bin) {
        use_above = above_in_bin;
        use_below = below_in_bin;
    }
    if (use_above && use_below)
        return distance(*std::prev(above), rounded) <= distance(rounded, *above) ? *std::prev(above) : *above;
    return use_above ? *above : *std::prev(above);
}

std::optional<std::vector<std::int64_t>> Histogram::distinct_values() const {
    if (keeps_seen_)
        return seen_;
    if (!exact())
        return std::nullopt;
    std::vector<std::int64_t> values;
    values.reserve(bins_.size());
    for (const Bin& bin : bins_)
        values.push_back(bin.min);
    return values;
}

void Histogram::note_extremes(Extreme low, Extreme high) {
    if (bins_.empty()) {
        min_ = low;
        max_ = high;
        return;
    }
    if (lower(low, min_))
        min_ = low;
    if (higher(high, max_))
        max_ = high;
}

void Histogram::count_towards_rebalance(std::uint64_t weight) {
    const std::uint64_t interval = config_.rebalance_interval;
    const std::uint64_t rest = added_since_rebalance_ + weight % interval;  // < 2 * interval: no overflow
    const std::uint64_t due = std::min<std::uint64_t>(weight / interval + rest / interval, config_.bins);
    added_since_rebalance_ = static_cast<std::uint32_t>(rest % interval);
    for (std::uint64_t i = 0; i < due && rebalance_once(); ++i) {
    }
}

// Joins the two lightest neighbours (only when every bin is in use, to make room) and splits the
// fullest bin that can split. Does nothing unless that bin holds more values than the joined pair:
// otherwise the bins would only get less even. Single-valued bins cannot split, so an exact histogram
// never rebalances and stays exact.
bool Histogram::rebalance_once() {
    const bool full = bins_.size() >= config_.bins;
    if (full && bins_.size() < 2)
        return false;
    const std::size_t pair = full ? lightest_pair(bins_) : 0;
    const std::uint64_t pair_count = full ? bins_[pair].count + bins_[pair + 1].count : 0;

    std::vector<std::size_t> fullest_first(bins_.size());
    std::iota(fullest_first.begin(), fullest_first.end(), std::size_t{0});
    std::stable_sort(fullest_first.begin(), fullest_first.end(),
                     [this](std::size_t a, std::size_t b) { return bins_[a].count > bins_[b].count; });
    for (const std::size_t i : fullest_first) {
        if (full && bins_[i].count <= pair_count)
            return false;
        // Heavier than the pair, so not part of it: the join and the split touch different bins.
        const std::optional<std::pair<Bin, Bin>> halves = split(bins_[i]);
        if (!halves)
            continue;
        bins_[i] = halves->first;
        bins_.insert(bins_.begin() + static_cast<std::ptrdiff_t>(i) + 1, halves->second);
        if (full)
            join_with_next(bins_, pair > i ? pair + 1 : pair);
        return true;
    }
    return false;
}

}  // namespace htrace
