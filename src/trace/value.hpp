#pragma once
// A parameter's value over every call an event stands for: one exact value, a lossless list of
// per-rank values, or a histogram (once the merge precision allowed merging values that differ).

#include "histogram/histogram.hpp"
#include "trace/rank_list.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace htrace {

// Values of some ranks: the i-th rank of `ranks` (ascending) had `value + i * step`. Step 0 is one
// value for all of them; a step makes values that follow the rank (`key = rank`, `offset = rank *
// block`, a strided sub-communicator's own ranks) one entry at any rank count.
struct PerRankValue {
    int64_t value;
    RankList ranks;
    int64_t step = 0;
    bool operator==(const PerRankValue&) const = default;
};

// 16 bytes whatever it holds: a replaying rank holds every value of the trace, and most are exact
// values or a few per-rank entries. Per-rank entries are kept packed (trace/packed.hpp) as the file
// stores them: the entry count (its low bit: whether steps follow), then each entry's value, step and
// ranks. A histogram, larger and rarer, has an allocation of its own.
class Value {
public:
    Value() = default;
    explicit Value(int64_t exact) : data_(exact) {}
    // Entries in any form (no rank twice): stored in the one canonical form, so that two values
    // that give every rank the same value are equal.
    explicit Value(const std::vector<PerRankValue>& per_rank);
    // `alike_on_every_rank`: every rank the histogram stands for had it, the same values as often
    // (a merge of one rank's iterations, or of ranks whose histograms were equal): the values of
    // ranks that do the same thing in the same iteration, an SPMD code's level sizes and direction
    // peers. Replay then draws one value per instance for all its participants, which keeps their
    // messages paired. Otherwise each participant draws its own.
    explicit Value(Histogram histogram, bool alike_on_every_rank = false)
        : data_(HeldHistogram(std::move(histogram), alike_on_every_rank))
    {
    }

    bool is_exact() const { return std::holds_alternative<int64_t>(data_); }
    bool is_per_rank() const { return std::holds_alternative<PackedBytes>(data_); }
    bool is_histogram() const { return std::holds_alternative<HeldHistogram>(data_); }

    int64_t exact() const { return std::get<int64_t>(data_); }
    // The canonical entries (with steps): what the file stores and h-dump shows.
    std::vector<PerRankValue> per_rank_entries() const;
    // Each distinct value with the ranks that had it (every step 0), ascending by value.
    std::vector<PerRankValue> per_rank() const;
    // The smallest and largest per-rank value.
    std::pair<int64_t, int64_t> per_rank_range() const;
    // Exact values are alike on every rank, per-rank values are not; histograms say (above).
    bool alike_on_every_rank() const { return is_exact() || (is_histogram() && std::get<HeldHistogram>(data_).alike()); }
    void set_alike_on_every_rank(bool alike)
    {
        if (is_histogram()) std::get<HeldHistogram>(data_).set_alike(alike);
    }
    const Histogram& histogram() const { return std::get<HeldHistogram>(data_).histogram(); }
    Histogram& histogram() { return std::get<HeldHistogram>(data_).histogram(); }

    // The value `rank` had, where the value is exact or per rank; nullopt for a histogram or a rank
    // without a value.
    std::optional<int64_t> value_for(Rank rank) const;

    bool operator==(const Value&) const = default;

private:
    // A histogram and whether it is alike on every rank, behind one pointer; copies copy it.
    class HeldHistogram {
    public:
        HeldHistogram(Histogram histogram, bool alike) : held_(std::make_unique<Held>(Held{std::move(histogram), alike})) {}
        HeldHistogram(const HeldHistogram& other) : held_(std::make_unique<Held>(*other.held_)) {}
        HeldHistogram(HeldHistogram&&) noexcept = default;
        HeldHistogram& operator=(const HeldHistogram& other)
        {
            if (this != &other) held_ = std::make_unique<Held>(*other.held_);
            return *this;
        }
        HeldHistogram& operator=(HeldHistogram&&) noexcept = default;

        const Histogram& histogram() const { return held_->histogram; }
        Histogram& histogram() { return held_->histogram; }
        bool alike() const { return held_->alike; }
        void set_alike(bool alike) { held_->alike = alike; }
        bool operator==(const HeldHistogram& other) const
        {
            if (!held_ || !other.held_) return held_ == other.held_;  // moved from
            return held_->histogram == other.held_->histogram && held_->alike == other.held_->alike;
        }

    private:
        struct Held {
            Histogram histogram;
            bool alike;
        };
        std::unique_ptr<Held> held_;
    };

    std::variant<int64_t, PackedBytes, HeldHistogram> data_{int64_t{0}};
};

}  // namespace htrace
