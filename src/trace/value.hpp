#pragma once
// A parameter's value over every call an event stands for: one exact value, a lossless list of
// per-rank values, or a histogram (once the merge precision allowed merging values that differ).

#include "histogram/histogram.hpp"
#include "trace/rank_list.hpp"

#include <cstdint>
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

class Value {
public:
    Value() = default;
    explicit Value(int64_t exact) : data_(exact) {}
    // Entries in any form (no rank twice): stored in the one canonical form, so that two values
    // that give every rank the same value are equal.
    explicit Value(const std::vector<PerRankValue>& per_rank);
    explicit Value(Histogram histogram) : data_(std::move(histogram)) {}

    bool is_exact() const { return std::holds_alternative<int64_t>(data_); }
    bool is_per_rank() const { return std::holds_alternative<std::vector<PerRankValue>>(data_); }
    bool is_histogram() const { return std::holds_alternative<Histogram>(data_); }

    int64_t exact() const { return std::get<int64_t>(data_); }
    // The canonical entries (with steps): what the file stores and h-dump shows.
    const std::vector<PerRankValue>& per_rank_entries() const { return std::get<std::vector<PerRankValue>>(data_); }
    // Each distinct value with the ranks that had it (every step 0), ascending by value.
    std::vector<PerRankValue> per_rank() const;
    // The smallest and largest per-rank value.
    std::pair<int64_t, int64_t> per_rank_range() const;
    const Histogram& histogram() const { return std::get<Histogram>(data_); }
    Histogram& histogram() { return std::get<Histogram>(data_); }

    // The value `rank` had, where the value is exact or per rank; nullopt for a histogram or a rank
    // without a value.
    std::optional<int64_t> value_for(Rank rank) const;

    bool operator==(const Value&) const = default;

private:
    std::variant<int64_t, std::vector<PerRankValue>, Histogram> data_{int64_t{0}};
};

}  // namespace htrace
