#include "trace/value.hpp"

#include <algorithm>
#include <limits>
#include <span>

namespace htrace {
namespace {

struct RankValue {
    Rank rank;
    uint32_t order;  // where it came among the entries: of a rank given twice, the first is kept
    int64_t value;
};

// The canonical form is made for every value of every event at every level of the merge's tree:
// its working lists are kept per thread, so that making one allocates only the result.
struct Scratch {
    std::vector<RankValue> values;
    std::vector<RankValue> by_value;
    std::vector<Rank> ranks;
    std::vector<char> placed;
    std::vector<size_t> members;
    std::vector<RankValue> alone;
    std::vector<uint8_t> packed;
};

Scratch& scratch()
{
    thread_local Scratch s;
    return s;
}

// Sorts `values` by rank and keeps the first value of a rank given twice.
void by_rank(std::vector<RankValue>& values)
{
    const auto before = [](const RankValue& a, const RankValue& b) {
        return a.rank != b.rank ? a.rank < b.rank : a.order < b.order;
    };
    if (!std::is_sorted(values.begin(), values.end(), before)) std::sort(values.begin(), values.end(), before);
    values.erase(std::unique(values.begin(), values.end(), [](const auto& a, const auto& b) { return a.rank == b.rank; }),
                 values.end());
}

// Appends the values of one entry's ranks (`ranks`, ascending) to `out`.
void append_entry(int64_t value, int64_t step, const std::vector<Rank>& ranks, std::vector<RankValue>& out)
{
    for (size_t i = 0; i < ranks.size(); ++i) {
        out.push_back({ranks[i], static_cast<uint32_t>(out.size()), value + int64_t(i) * step});
    }
}

// Every rank's value, ascending by rank (a rank given twice keeps its first value), into `out`.
void rank_values(const std::vector<PerRankValue>& entries, std::vector<RankValue>& out, std::vector<Rank>& ranks)
{
    out.clear();
    for (const auto& entry : entries) {
        entry.ranks.expand(ranks);
        append_entry(entry.value, entry.step, ranks, out);
    }
    by_rank(out);
}

// `values` (ascending by rank) sorted by value, then rank: each value's ranks in a row.
void sort_by_value(std::vector<RankValue>& values)
{
    std::sort(values.begin(), values.end(), [](const RankValue& a, const RankValue& b) {
        return a.value != b.value ? a.value < b.value : a.rank < b.rank;
    });
}

// Calls `group(value, ranks)` for each run of one value in `by_value` (sort_by_value's order).
template <class Visitor>
void for_each_group(const std::vector<RankValue>& by_value, std::vector<Rank>& ranks, Visitor&& group)
{
    for (size_t i = 0; i < by_value.size();) {
        ranks.clear();
        size_t j = i;
        for (; j < by_value.size() && by_value[j].value == by_value[i].value; ++j) ranks.push_back(by_value[j].rank);
        group(by_value[i].value, ranks);
        i = j;
    }
}

std::vector<PerRankValue> grouped_by_value(const std::vector<RankValue>& values)
{
    std::vector<RankValue> by_value = values;
    sort_by_value(by_value);
    std::vector<PerRankValue> out;
    std::vector<Rank> ranks;
    for_each_group(by_value, ranks, [&](int64_t value, const std::vector<Rank>& group) {
        out.push_back({value, RankList::from_sorted(group), 0});
    });
    return out;
}

// How many distinct values `by_value` (sort_by_value's order) holds.
size_t distinct_values(const std::vector<RankValue>& by_value)
{
    size_t groups = 0;
    for (size_t i = 0; i < by_value.size(); ++i) groups += i == 0 || by_value[i].value != by_value[i - 1].value ? 1 : 0;
    return groups;
}

// How far past a line's first rank to look for its second (bounds the work on long lists).
constexpr size_t kPartnerWindow = 256;
constexpr size_t kShortestLine = 3;

// One line of affine_lines: its ranks are `members[begin, end)` (positions in the values).
struct Line {
    Rank first;
    int64_t value;
    int64_t step;
    size_t begin;
    size_t end;
};

// The values as lines: from the lowest rank not yet placed, through the next rank with another
// value (so that ranks with one value can run along a line of another: `key = rank / 2` of
// `color = rank % 2`), as far as ranks at the same stride follow with the same step. Negative
// values (MPI_PROC_NULL, no communicator ...) stay symbolic: no line runs through them. What no line
// of at least three ranks takes is left in `s.alone` (ascending by rank), to be grouped by value.
// The lines' members are in `s.members`.
std::vector<Line> affine_lines(const std::vector<RankValue>& values, Scratch& s)
{
    const size_t n = values.size();
    s.placed.assign(n, 0);
    s.members.clear();
    s.alone.clear();
    const auto find = [&](int64_t rank) -> size_t {
        const auto at = std::lower_bound(values.begin(), values.end(), rank,
                                         [](const RankValue& rv, int64_t r) { return rv.rank < r; });
        return at != values.end() && at->rank == rank ? static_cast<size_t>(at - values.begin()) : n;
    };
    std::vector<Line> lines;
    for (size_t first = 0; first < n; ++first) {
        if (s.placed[first]) continue;
        s.placed[first] = 1;
        const RankValue start = values[first];
        size_t partner = first + 1;
        const size_t window_end = std::min(n, first + 1 + kPartnerWindow);
        while (partner < window_end && (s.placed[partner] || values[partner].value == start.value)) ++partner;
        if (partner < window_end && start.value >= 0) {
            const int64_t stride = int64_t(values[partner].rank) - start.rank;
            const int64_t step = values[partner].value - start.value;
            const size_t begin = s.members.size();
            s.members.push_back(first);
            for (int64_t k = 1;; ++k) {
                const size_t at = find(start.rank + k * stride);
                if (at == n || s.placed[at] || values[at].value != start.value + k * step || values[at].value < 0) break;
                s.members.push_back(at);
            }
            // Two ranks are no cheaper as a line, and would take a rank from its own value's group.
            if (s.members.size() - begin >= kShortestLine) {
                for (size_t k = begin; k < s.members.size(); ++k) s.placed[s.members[k]] = 1;
                lines.push_back({start.rank, start.value, step, begin, s.members.size()});
                continue;
            }
            s.members.resize(begin);
        }
        s.alone.push_back(start);
    }
    return lines;
}

// Appends one packed entry (Value's form) to `out`.
void pack_entry(std::vector<uint8_t>& out, int64_t value, bool steps, int64_t step, std::span<const Rank> ranks)
{
    pack_signed(out, value);
    if (steps) pack_signed(out, step);
    RankList::pack_sorted(ranks, out);
}

// The packed form of the values grouped by value (`by_value` in sort_by_value's order).
PackedBytes packed_groups(const std::vector<RankValue>& by_value, size_t groups, Scratch& s)
{
    s.packed.clear();
    pack_unsigned(s.packed, groups << 1);
    for_each_group(by_value, s.ranks, [&](int64_t value, const std::vector<Rank>& ranks) {
        pack_entry(s.packed, value, false, 0, ranks);
    });
    return PackedBytes(s.packed);
}

// The packed form of `lines` with the groups by value of what they left alone (`s.alone`, sorted
// by value), all ascending by first rank.
PackedBytes packed_lines(const std::vector<RankValue>& values, std::vector<Line>& lines, Scratch& s)
{
    struct Group {
        Rank first;
        int64_t value;
        size_t begin;
    };
    std::vector<Group> groups;
    for (size_t i = 0; i < s.alone.size(); ++i) {
        if (i == 0 || s.alone[i].value != s.alone[i - 1].value) groups.push_back({s.alone[i].rank, s.alone[i].value, i});
    }
    const bool steps = std::any_of(lines.begin(), lines.end(), [](const Line& l) { return l.step != 0; });
    s.packed.clear();
    pack_unsigned(s.packed, (lines.size() + groups.size()) << 1 | (steps ? 1 : 0));
    // Lines and groups never share a first rank (each rank is in one): merged by it.
    std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) { return a.first < b.first; });
    std::sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.first < b.first; });
    size_t l = 0;
    size_t g = 0;
    while (l < lines.size() || g < groups.size()) {
        s.ranks.clear();
        if (g == groups.size() || (l < lines.size() && lines[l].first < groups[g].first)) {
            const Line& line = lines[l++];
            for (size_t k = line.begin; k < line.end; ++k) s.ranks.push_back(values[s.members[k]].rank);
            pack_entry(s.packed, line.value, steps, line.step, s.ranks);
        } else {
            const Group& group = groups[g++];
            for (size_t k = group.begin; k < s.alone.size() && s.alone[k].value == group.value; ++k) {
                s.ranks.push_back(s.alone[k].rank);
            }
            pack_entry(s.packed, group.value, steps, 0, s.ranks);
        }
    }
    return PackedBytes(s.packed);
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

// The canonical form of `s.values` (ascending by rank, one value each): one entry per distinct
// value (ascending by value), unless lines with steps take fewer entries (then ascending by first
// rank). Both depend on nothing but each rank's value.
PackedBytes canonical(Scratch& s)
{
    s.by_value = s.values;
    sort_by_value(s.by_value);
    const size_t groups = distinct_values(s.by_value);
    if (groups > 1) {
        std::vector<Line> lines = affine_lines(s.values, s);
        if (!lines.empty()) {
            sort_by_value(s.alone);
            if (lines.size() + distinct_values(s.alone) < groups) return packed_lines(s.values, lines, s);
        }
    }
    return packed_groups(s.by_value, groups, s);
}

}  // namespace

Value::Value(const std::vector<PerRankValue>& per_rank)
{
    Scratch& s = scratch();
    rank_values(per_rank, s.values, s.ranks);
    data_ = canonical(s);
}

Value Value::per_rank_union(const Value& a, const RankList& ranks_a, const Value& b, const RankList& ranks_b)
{
    // Read from both sides' packed entries: no entry list, no rank list is made on the way.
    Scratch& s = scratch();
    s.values.clear();
    for (const auto& [side, ranks] : {std::pair{&a, &ranks_a}, std::pair{&b, &ranks_b}}) {
        if (side->is_exact()) {
            ranks->expand(s.ranks);
            append_entry(side->exact(), 0, s.ranks, s.values);
            continue;
        }
        for_each_entry(std::get<PackedBytes>(side->data_), [&](int64_t value, int64_t step, Unpacker& in) {
            RankList::expand_packed(in, s.ranks);
            append_entry(value, step, s.ranks, s.values);
            return false;
        });
    }
    by_rank(s.values);
    Value merged;
    merged.data_ = canonical(s);
    return merged;
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
    if (constant && ascending) return entries;
    Scratch& s = scratch();
    rank_values(entries, s.values, s.ranks);
    return grouped_by_value(s.values);
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
