#pragma once
// A parameter's value over every call an event stands for: one exact value, a lossless list of
// per-rank values, or a histogram (once the merge precision allowed merging values that differ).

#include "histogram/histogram.hpp"
#include "trace/rank_list.hpp"

#include <cstdint>
#include <variant>
#include <vector>

namespace htrace {

struct PerRankValue {
    int64_t value;
    RankList ranks;
    bool operator==(const PerRankValue&) const = default;
};

class Value {
public:
    Value() = default;
    explicit Value(int64_t exact) : data_(exact) {}
    explicit Value(std::vector<PerRankValue> per_rank) : data_(std::move(per_rank)) {}
    explicit Value(Histogram histogram) : data_(std::move(histogram)) {}

    bool is_exact() const { return std::holds_alternative<int64_t>(data_); }
    bool is_per_rank() const { return std::holds_alternative<std::vector<PerRankValue>>(data_); }
    bool is_histogram() const { return std::holds_alternative<Histogram>(data_); }

    int64_t exact() const { return std::get<int64_t>(data_); }
    const std::vector<PerRankValue>& per_rank() const { return std::get<std::vector<PerRankValue>>(data_); }
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
