#pragma once
// A parameter's value over every call an event stands for: one exact value, a lossless list of
// per-rank values, or a histogram (once the merge precision allowed merging values that differ).

#include "histogram/histogram.hpp"
#include "trace/rank_list.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
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

// 9 bytes whatever it holds, and no alignment, so that a parameter (a Role and a Value) takes 10:
// a replaying rank holds every value of the trace, and most are exact values or a few per-rank
// entries. Per-rank entries are kept packed (trace/packed.hpp) as the file stores them: the entry
// count (its low bit: whether steps follow), then each entry's value, step and ranks. A histogram,
// larger and rarer, has an allocation of its own.
class Value {
public:
    Value() = default;
    explicit Value(int64_t exact) : data_(Exact(exact)) {}
    // Entries in any form (no rank twice): stored in the one canonical form, so that two values
    // that give every rank the same value are equal.
    explicit Value(const std::vector<PerRankValue>& per_rank);
    // The values of two disjoint sets of ranks as one per-rank value, in the canonical form: an
    // exact value is each of its side's `ranks`' (the merge of two sides' parameters).
    static Value per_rank_union(const Value& a, const RankList& ranks_a, const Value& b, const RankList& ranks_b);
    // Entries already packed in the canonical form, as packed_entries() gives them (the merge's
    // messages, written by this build from such values): kept as they are.
    static Value from_canonical(std::span<const uint8_t> packed_entries)
    {
        Value value;
        value.data_ = PackedBytes(packed_entries);
        return value;
    }
    // `alike_on_every_rank`: every rank the histogram stands for had it, the same values as often
    // (a merge of one rank's iterations, or of ranks whose histograms were equal): the values of
    // ranks that do the same thing in the same iteration, an SPMD code's level sizes and direction
    // peers. Replay then draws one value per instance for all its participants, which keeps their
    // messages paired. Otherwise each participant draws its own.
    explicit Value(Histogram histogram, bool alike_on_every_rank = false)
        : data_(HeldHistogram(std::move(histogram), alike_on_every_rank))
    {
    }

    bool is_exact() const { return std::holds_alternative<Exact>(data_); }
    bool is_per_rank() const { return std::holds_alternative<PackedBytes>(data_); }
    bool is_histogram() const { return std::holds_alternative<HeldHistogram>(data_); }

    int64_t exact() const { return std::get<Exact>(data_).value(); }
    // The canonical entries (with steps): what the file stores and h-dump shows.
    std::vector<PerRankValue> per_rank_entries() const;
    // The canonical entries packed (trace/packed.hpp), as a trace file stores them after the tag.
    std::span<const uint8_t> packed_entries() const { return std::get<PackedBytes>(data_).bytes(); }
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
    // An exact value as 8 plain bytes (no alignment, as PackedBytes).
    class Exact {
    public:
        explicit Exact(int64_t value) { std::memcpy(bytes_, &value, sizeof value); }
        int64_t value() const
        {
            int64_t value = 0;
            std::memcpy(&value, bytes_, sizeof value);
            return value;
        }
        bool operator==(const Exact& other) const { return value() == other.value(); }

    private:
        uint8_t bytes_[8];
    };

    // A histogram and whether it is alike on every rank, behind a pointer kept as 8 plain bytes;
    // copies copy the histogram.
    class HeldHistogram {
    public:
        HeldHistogram(Histogram histogram, bool alike) { set(new Held{std::move(histogram), alike}); }
        HeldHistogram(const HeldHistogram& other) { set(new Held(*other.held())); }
        HeldHistogram(HeldHistogram&& other) noexcept
        {
            set(other.held());
            other.set(nullptr);
        }
        HeldHistogram& operator=(const HeldHistogram& other)
        {
            if (this != &other) *this = HeldHistogram(other);
            return *this;
        }
        HeldHistogram& operator=(HeldHistogram&& other) noexcept
        {
            Held* mine = held();
            set(other.held());
            other.set(mine);
            return *this;
        }
        ~HeldHistogram() { delete held(); }

        const Histogram& histogram() const { return held()->histogram; }
        Histogram& histogram() { return held()->histogram; }
        bool alike() const { return held()->alike; }
        void set_alike(bool alike) { held()->alike = alike; }
        bool operator==(const HeldHistogram& other) const
        {
            if (held() == nullptr || other.held() == nullptr) return held() == other.held();  // moved from
            return held()->histogram == other.held()->histogram && held()->alike == other.held()->alike;
        }

    private:
        struct Held {
            Histogram histogram;
            bool alike;
        };
        Held* held() const
        {
            Held* held = nullptr;
            std::memcpy(&held, pointer_, sizeof held);
            return held;
        }
        void set(Held* held) { std::memcpy(pointer_, &held, sizeof held); }

        uint8_t pointer_[sizeof(Held*)];
    };

    std::variant<Exact, PackedBytes, HeldHistogram> data_{Exact(0)};
};
static_assert(alignof(Value) == 1);

}  // namespace htrace
