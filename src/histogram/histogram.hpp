#pragma once

// A mergeable, self-rebalancing histogram of int64 values: what a trace keeps of a parameter (or a
// loop count, or a compute time) once values that differ have been merged. The number of bins is fixed
// for the run; bin ranges adapt as values arrive. Each bin keeps count, min, max, mean and m2, so
// histograms merge across loop iterations and ranks without losing these moments.
//
// While the distinct values fit in the bins, each has its own bin and the histogram is exact. After
// that a value outside every bin joins the nearest one (ties: the lower). Every `rebalance_interval`
// values the two lightest neighbouring bins join and the fullest bin that can split splits in two;
// neither changes the histogram's count, mean, variance, min or max.

#include <boost/random/uniform_int_distribution.hpp>

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace htrace {

// Fixed for the whole run (HTRACE_BINS, HTRACE_REBALANCE): every histogram of a trace shares it, so
// histograms can merge.
struct HistogramConfig {
    std::uint32_t bins = 32;
    std::uint32_t rebalance_interval = 64;  // added values (counting weight) between two rebalances

    bool valid() const noexcept { return bins >= 1 && rebalance_interval >= 1; }
    bool operator==(const HistogramConfig&) const = default;
};

class Histogram {
public:
    // Bins are sorted and their ranges disjoint. A bin with min == max holds exactly the values it says
    // (no split ever produces one); other bins' ranges may be estimates after a split.
    struct Bin {
        std::uint64_t count = 0;
        std::int64_t min = 0;
        std::int64_t max = 0;
        // mean - min, so the mean keeps its precision for values far from zero (file offsets, byte
        // counts, nanoseconds), where a double's absolute resolution would spoil m2.
        double mean_offset = 0.0;
        // Sum of squared deviations from the mean: merges exactly (Chan et al.), a variance does not.
        double m2 = 0.0;

        double mean() const noexcept { return static_cast<double>(min) + mean_offset; }
        bool operator==(const Bin&) const = default;
    };

    // A global extreme and the rank that produced it; among equal values the lower rank wins.
    struct Extreme {
        std::int64_t value = 0;
        std::int32_t rank = -1;  // -1: the histogram is empty

        bool operator==(const Extreme&) const = default;
    };

    Histogram() = default;
    explicit Histogram(HistogramConfig config);  // precondition: config.valid()

    // Rebuilds a histogram from what accessors return (for the trace reader); nullopt if the parts are
    // inconsistent (bins unsorted or overlapping, empty bins, more bins than the config allows,
    // extremes not matching the outer bins, seen values unsorted or not spanning [min, max]).
    static std::optional<Histogram> from_parts(HistogramConfig config, std::vector<Bin> bins, Extreme min,
                                               Extreme max,
                                               std::optional<std::vector<std::int64_t>> seen_values,
                                               std::uint32_t added_since_rebalance);

    // Also keep the sorted set of distinct values ever seen (endpoints: replay must never invent a peer).
    // Succeeds on an exact histogram (including an empty one), whose bins still name every value;
    // returns false, and changes nothing, once values have been lost.
    bool keep_seen_values();

    // Adds `value` `weight` times (weight > 0) in one step. A heavy weight that crosses several
    // rebalance intervals rebalances at most `bins` times, and stops as soon as bins are even.
    void add(std::int64_t value, std::int32_t rank, std::uint64_t weight = 1);

    // Combines `other` (precondition: same config) into this histogram; moments combine exactly. The
    // result depends only on the two inputs, not on which one is `this`: a.merge(b) == b.merge(a).
    // Seen values: the result keeps them if either input does; an input without them contributes its
    // bins' values when it is exact, and if it is not, the result drops the set (values were lost).
    void merge(const Histogram& other);

    // Takes `weight` of the values `value` away again, where a bin holds exactly that value more
    // than `weight` times (so min, max and the seen set stay true); returns whether it could.
    bool take_away(std::int64_t value, std::uint64_t weight);

    // Draws one value: a uniform position among all counted values picks the bin (Boost.Random, so
    // every platform draws the same sequence from the same engine state); the bin answers its mean
    // rounded (halves up) into its range. With seen values kept, the answer snaps to the nearest seen
    // value in the bin (ties to the lower; the nearest seen value overall if the bin holds none).
    // Precondition: !empty().
    template <class Engine>
    std::int64_t sample(Engine& engine) const;
    // The value a draw that picked bin `index` answers (see sample()). Precondition: index < bins().size().
    std::int64_t bin_value(std::size_t index) const { return value_of(bins_[index]); }

    std::uint64_t count() const noexcept;
    bool empty() const noexcept { return bins_.empty(); }
    double mean() const noexcept;      // 0 when empty
    double variance() const noexcept;  // population variance of all values; 0 when empty
    Extreme min() const noexcept { return min_; }
    Extreme max() const noexcept { return max_; }
    bool exact() const noexcept;  // every bin holds one distinct value, so the histogram lost nothing

    const std::vector<Bin>& bins() const noexcept { return bins_; }
    const HistogramConfig& config() const noexcept { return config_; }
    bool keeps_seen_values() const noexcept { return keeps_seen_; }
    const std::vector<std::int64_t>& seen_values() const noexcept { return seen_; }  // empty unless kept
    std::uint32_t added_since_rebalance() const noexcept { return added_since_rebalance_; }

    bool operator==(const Histogram&) const = default;

private:
    std::size_t bin_at(std::uint64_t position) const;
    std::int64_t value_of(const Bin& bin) const;
    std::optional<std::vector<std::int64_t>> distinct_values() const;
    void note_extremes(Extreme low, Extreme high);
    void count_towards_rebalance(std::uint64_t weight);
    bool rebalance_once();

    HistogramConfig config_;
    std::uint32_t added_since_rebalance_ = 0;  // always < config_.rebalance_interval
    bool keeps_seen_ = false;
    Extreme min_;
    Extreme max_;
    std::vector<Bin> bins_;
    std::vector<std::int64_t> seen_;
};

template <class Engine>
std::int64_t Histogram::sample(Engine& engine) const {
    assert(!empty());
    if (empty())
        return 0;
    // Not a std:: distribution: those differ between standard libraries, and replay needs every rank
    // on every platform to draw the same values.
    boost::random::uniform_int_distribution<std::uint64_t> position(0, count() - 1);
    return value_of(bins_[bin_at(position(engine))]);
}

}  // namespace htrace
