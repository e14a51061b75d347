#include "trace/value.hpp"

#include <algorithm>
#include <limits>
#include <map>

namespace htrace {
namespace {

struct RankValue {
    Rank rank;
    int64_t value;
};

// Every rank's value, ascending by rank (a rank given twice keeps its first value).
std::vector<RankValue> rank_values(const std::vector<PerRankValue>& entries)
{
    std::vector<RankValue> out;
    out.reserve(entries.size());
    for (const auto& entry : entries) {
        const std::vector<Rank> ranks = entry.ranks.expand();
        for (size_t i = 0; i < ranks.size(); ++i) out.push_back({ranks[i], entry.value + int64_t(i) * entry.step});
    }
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank < b.rank; });
    out.erase(std::unique(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.rank == b.rank; }),
              out.end());
    return out;
}

std::vector<PerRankValue> grouped_by_value(const std::vector<RankValue>& values)
{
    // Sorted by value, then rank (a stable sort of values ascending by rank): each value's ranks in a row.
    std::vector<RankValue> by_value = values;
    std::stable_sort(by_value.begin(), by_value.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
    std::vector<PerRankValue> out;
    std::vector<Rank> ranks;
    for (size_t i = 0; i < by_value.size();) {
        ranks.clear();
        size_t j = i;
        for (; j < by_value.size() && by_value[j].value == by_value[i].value; ++j) ranks.push_back(by_value[j].rank);
        out.push_back({by_value[i].value, RankList::from_sorted(ranks), 0});
        i = j;
    }
    return out;
}

size_t distinct_values(const std::vector<RankValue>& values)
{
    std::vector<int64_t> seen;
    seen.reserve(values.size());
    for (const auto& rv : values) seen.push_back(rv.value);
    std::sort(seen.begin(), seen.end());
    return static_cast<size_t>(std::unique(seen.begin(), seen.end()) - seen.begin());
}

// How far past a line's first rank to look for its second (bounds the work on long lists).
constexpr size_t kPartnerWindow = 256;
constexpr size_t kShortestLine = 3;

// The values as lines: from the lowest rank not yet placed, through the next rank with another
// value (so that ranks with one value can run along a line of another: `key = rank / 2` of
// `color = rank % 2`), as far as ranks at the same stride follow with the same step. Negative
// values (MPI_PROC_NULL, no communicator ...) stay symbolic: no line runs through them. What no line
// of at least three ranks takes is grouped by value. Empty where no line forms: the grouping by
// value alone then takes no more entries.
std::vector<PerRankValue> affine_lines(const std::vector<RankValue>& values)
{
    const size_t n = values.size();
    std::vector<char> placed(n, 0);
    const auto find = [&](int64_t rank) -> size_t {
        const auto at = std::lower_bound(values.begin(), values.end(), rank,
                                         [](const RankValue& rv, int64_t r) { return rv.rank < r; });
        return at != values.end() && at->rank == rank ? static_cast<size_t>(at - values.begin()) : n;
    };
    std::vector<PerRankValue> lines;
    std::map<int64_t, std::vector<Rank>> alone;
    for (size_t first = 0; first < n; ++first) {
        if (placed[first]) continue;
        placed[first] = 1;
        const RankValue start = values[first];
        size_t partner = first + 1;
        const size_t window_end = std::min(n, first + 1 + kPartnerWindow);
        while (partner < window_end && (placed[partner] || values[partner].value == start.value)) ++partner;
        if (partner < window_end && start.value >= 0) {
            const int64_t stride = int64_t(values[partner].rank) - start.rank;
            const int64_t step = values[partner].value - start.value;
            std::vector<size_t> members{first};
            for (int64_t k = 1;; ++k) {
                const size_t at = find(start.rank + k * stride);
                if (at == n || placed[at] || values[at].value != start.value + k * step || values[at].value < 0) break;
                members.push_back(at);
            }
            // Two ranks are no cheaper as a line, and would take a rank from its own value's group.
            if (members.size() >= kShortestLine) {
                std::vector<Rank> ranks;
                for (size_t at : members) {
                    placed[at] = 1;
                    ranks.push_back(values[at].rank);
                }
                lines.push_back({start.value, RankList::from_sorted(ranks), step});
                continue;
            }
        }
        alone[start.value].push_back(start.rank);
    }
    if (lines.empty()) return lines;
    for (auto& [value, ranks] : alone) {
        std::sort(ranks.begin(), ranks.end());
        lines.push_back({value, RankList::from_sorted(ranks), 0});
    }
    std::sort(lines.begin(), lines.end(), [](const PerRankValue& a, const PerRankValue& b) {
        return a.ranks.first() < b.ranks.first();
    });
    return lines;
}

// The packed form of canonical entries (Value).
PackedBytes packed(const std::vector<PerRankValue>& entries)
{
    const bool steps = std::any_of(entries.begin(), entries.end(), [](const auto& e) { return e.step != 0; });
    // One scratch buffer per thread, as RankList's: PackedBytes copies it.
    thread_local std::vector<uint8_t> out;
    out.clear();
    pack_unsigned(out, entries.size() << 1 | (steps ? 1 : 0));
    for (const auto& entry : entries) {
        pack_signed(out, entry.value);
        if (steps) pack_signed(out, entry.step);
        entry.ranks.pack(out);
    }
    return PackedBytes(out);
}

// Calls `visit(value, step, in)` for each packed entry, `in` at the entry's ranks, which `visit`
// must read (RankList::unpack and its kin); stops where `visit` returns true.
template <class Visitor>
void for_each_entry(const PackedBytes& packed, Visitor&& visit)
{
    Unpacker in(packed.bytes());
    if (in.at_end()) return;
    const uint64_t header = in.unsigned_int();
    const bool steps = (header & 1) != 0;
    for (uint64_t i = 0; i < header >> 1; ++i) {
        const int64_t value = in.signed_int();
        const int64_t step = steps ? in.signed_int() : 0;
        if (visit(value, step, in)) return;
    }
}

}  // namespace

// The canonical form: one entry per distinct value (ascending by value), unless lines with steps
// take fewer entries (then ascending by first rank). Both depend on nothing but each rank's value.
Value::Value(const std::vector<PerRankValue>& per_rank)
{
    const std::vector<RankValue> values = rank_values(per_rank);
    const size_t groups = distinct_values(values);
    if (groups > 1) {
        std::vector<PerRankValue> lines = affine_lines(values);
        if (!lines.empty() && lines.size() < groups) {
            data_ = packed(lines);
            return;
        }
    }
    data_ = packed(grouped_by_value(values));
}

std::vector<PerRankValue> Value::per_rank_entries() const
{
    std::vector<PerRankValue> entries;
    for_each_entry(std::get<PackedBytes>(data_), [&](int64_t value, int64_t step, Unpacker& in) {
        entries.push_back({value, RankList::unpack(in), step});
        return false;
    });
    return entries;
}

std::vector<PerRankValue> Value::per_rank() const
{
    auto entries = per_rank_entries();
    const bool constant = std::all_of(entries.begin(), entries.end(), [](const auto& e) { return e.step == 0; });
    const bool ascending = std::adjacent_find(entries.begin(), entries.end(), [](const auto& a, const auto& b) {
                               return a.value >= b.value;
                           }) == entries.end();
    return constant && ascending ? entries : grouped_by_value(rank_values(entries));
}

std::pair<int64_t, int64_t> Value::per_rank_range() const
{
    int64_t low = std::numeric_limits<int64_t>::max();
    int64_t high = std::numeric_limits<int64_t>::min();
    for_each_entry(std::get<PackedBytes>(data_), [&](int64_t value, int64_t step, Unpacker& in) {
        const int64_t last = value + (std::max<int64_t>(RankList::size_of_packed(in), 1) - 1) * step;
        low = std::min({low, value, last});
        high = std::max({high, value, last});
        return false;
    });
    return low <= high ? std::pair{low, high} : std::pair<int64_t, int64_t>{0, 0};
}

std::optional<int64_t> Value::value_for(Rank rank) const
{
    if (is_exact()) return exact();
    std::optional<int64_t> found;
    if (is_per_rank()) {
        for_each_entry(std::get<PackedBytes>(data_), [&](int64_t value, int64_t step, Unpacker& in) {
            if (const auto index = RankList::index_in_packed(in, rank)) found = value + *index * step;
            return found.has_value();
        });
    }
    return found;
}

}  // namespace htrace
