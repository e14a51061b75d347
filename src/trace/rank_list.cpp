#include "trace/rank_list.hpp"

#include <algorithm>
#include <charconv>

namespace htrace {
namespace {

bool run_contains(const RankRun& run, Rank rank)
{
    // Peel dimensions from the outermost: strides of nested runs grow outwards, so the largest
    // multiple that fits is the only candidate.
    int64_t offset = int64_t(rank) - run.start;
    if (offset < 0) return false;
    for (auto dim = run.dims.rbegin(); dim != run.dims.rend(); ++dim) {
        if (dim->stride == 0) continue;
        const int64_t step = std::min<int64_t>(offset / dim->stride, dim->count - 1);
        offset -= step * dim->stride;
    }
    return offset == 0;
}

void expand_run(const RankRun& run, size_t dim, int64_t base, std::vector<Rank>& out)
{
    if (dim == 0 && run.dims.empty()) {
        out.push_back(static_cast<Rank>(base));
        return;
    }
    const RankDimension& d = run.dims[dim];
    for (int32_t i = 0; i < d.count; ++i) {
        const int64_t value = base + int64_t(i) * d.stride;
        if (dim == 0) {
            out.push_back(static_cast<Rank>(value));
        } else {
            expand_run(run, dim - 1, value, out);
        }
    }
}

// How many members of `run` (its innermost `dims` dimensions, from `start`) are below `rank`. A
// dimension's blocks follow each other in ascending order, so only the block `rank` falls in is partial.
int64_t members_below(const RankRun& run, size_t dims, int64_t start, Rank rank)
{
    if (dims == 0) return start < rank ? 1 : 0;
    if (rank <= start) return 0;
    const RankDimension& d = run.dims[dims - 1];
    int64_t inner = 1;
    for (size_t i = 0; i + 1 < dims; ++i) inner *= run.dims[i].count;
    const int64_t block = d.stride <= 0 ? 0 : std::min<int64_t>((int64_t(rank) - start) / d.stride, d.count - 1);
    return block * inner + members_below(run, dims - 1, start + block * d.stride, rank);
}

// Joins neighbouring runs of equal shape whose starts step evenly into one run with one more
// dimension, until nothing joins.
std::vector<RankRun> fold_runs(std::vector<RankRun> runs)
{
    bool changed = true;
    while (changed) {
        changed = false;
        std::vector<RankRun> out;
        for (size_t i = 0; i < runs.size();) {
            size_t j = i + 1;
            if (j < runs.size() && runs[j].dims == runs[i].dims) {
                const int64_t step = int64_t(runs[j].start) - runs[i].start;
                while (j + 1 < runs.size() && runs[j + 1].dims == runs[i].dims &&
                       int64_t(runs[j + 1].start) - runs[j].start == step) {
                    ++j;
                }
                if (j - i + 1 >= 2) {
                    RankRun joined = runs[i];
                    joined.dims.push_back({static_cast<int32_t>(j - i + 1), static_cast<int32_t>(step)});
                    out.push_back(std::move(joined));
                    i = j + 1;
                    changed = true;
                    continue;
                }
            }
            out.push_back(runs[i]);
            ++i;
        }
        runs = std::move(out);
    }
    return runs;
}

}  // namespace

int64_t RankRun::size() const
{
    int64_t n = 1;
    for (const auto& d : dims) n *= d.count;
    return n;
}

RankList::RankList(Rank rank) : runs_{RankRun{rank, {}}} {}

RankList RankList::from_sorted(const std::vector<Rank>& ranks)
{
    std::vector<RankRun> runs;
    for (size_t i = 0; i < ranks.size();) {
        if (i + 1 == ranks.size()) {
            runs.push_back({ranks[i], {}});
            break;
        }
        const int32_t stride = ranks[i + 1] - ranks[i];
        size_t j = i + 1;
        while (j + 1 < ranks.size() && ranks[j + 1] - ranks[j] == stride) ++j;
        // A pair that breaks a longer run just after it is better left to that run.
        if (j == i + 1 && j + 2 < ranks.size() && ranks[j + 1] - ranks[j] == ranks[j + 2] - ranks[j + 1] &&
            ranks[j + 1] - ranks[j] != stride) {
            runs.push_back({ranks[i], {}});
            ++i;
            continue;
        }
        runs.push_back({ranks[i], {{static_cast<int32_t>(j - i + 1), stride}}});
        i = j + 1;
    }
    RankList list;
    list.runs_ = fold_runs(std::move(runs));
    return list;
}

RankList RankList::from_runs(std::vector<RankRun> runs)
{
    RankList list;
    list.runs_ = std::move(runs);
    return list;
}

int64_t RankList::size() const
{
    int64_t n = 0;
    for (const auto& run : runs_) n += run.size();
    return n;
}

bool RankList::contains(Rank rank) const
{
    return std::any_of(runs_.begin(), runs_.end(), [rank](const RankRun& run) { return run_contains(run, rank); });
}

std::optional<int64_t> RankList::index_of(Rank rank) const
{
    if (!contains(rank)) return std::nullopt;
    // Runs may interleave ("0-6^8:8,7-63:8"): the index counts the members below `rank` in every run.
    int64_t below = 0;
    for (const auto& run : runs_) below += members_below(run, run.dims.size(), run.start, rank);
    return below;
}

std::vector<Rank> RankList::expand() const
{
    std::vector<Rank> out;
    for (const auto& run : runs_) {
        if (run.dims.empty()) {
            out.push_back(run.start);
        } else {
            expand_run(run, run.dims.size() - 1, run.start, out);
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

RankList RankList::unite(const RankList& other) const
{
    if (other.empty()) return *this;
    if (empty()) return other;
    std::vector<Rank> a = expand();
    std::vector<Rank> b = other.expand();
    std::vector<Rank> all;
    all.reserve(a.size() + b.size());
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
    return from_sorted(all);
}

std::string RankList::to_string() const
{
    std::string out;
    for (const auto& run : runs_) {
        if (!out.empty()) out += ',';
        out += std::to_string(run.start);
        if (run.dims.empty()) continue;
        const auto& inner = run.dims[0];
        out += '-' + std::to_string(int64_t(run.start) + int64_t(inner.count - 1) * inner.stride);
        if (inner.stride != 1) out += ':' + std::to_string(inner.stride);
        for (size_t d = 1; d < run.dims.size(); ++d) {
            out += '^' + std::to_string(run.dims[d].count) + ':' + std::to_string(run.dims[d].stride);
        }
    }
    return out;
}

namespace {

bool parse_int(std::string_view& text, int64_t& value)
{
    const auto* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc()) return false;
    text.remove_prefix(static_cast<size_t>(ptr - text.data()));
    return true;
}

bool consume(std::string_view& text, char c)
{
    if (text.empty() || text.front() != c) return false;
    text.remove_prefix(1);
    return true;
}

}  // namespace

std::optional<RankList> RankList::parse(std::string_view text)
{
    std::vector<RankRun> runs;
    while (!text.empty()) {
        int64_t start = 0;
        if (!parse_int(text, start)) return std::nullopt;
        RankRun run{static_cast<Rank>(start), {}};
        if (consume(text, '-')) {
            int64_t last = 0;
            int64_t stride = 1;
            if (!parse_int(text, last)) return std::nullopt;
            if (consume(text, ':') && !parse_int(text, stride)) return std::nullopt;
            if (stride <= 0 || last < start || (last - start) % stride != 0) return std::nullopt;
            run.dims.push_back({static_cast<int32_t>((last - start) / stride + 1), static_cast<int32_t>(stride)});
            while (consume(text, '^')) {
                int64_t count = 0;
                int64_t outer = 0;
                if (!parse_int(text, count) || !consume(text, ':') || !parse_int(text, outer) || count <= 0) {
                    return std::nullopt;
                }
                run.dims.push_back({static_cast<int32_t>(count), static_cast<int32_t>(outer)});
            }
        }
        runs.push_back(std::move(run));
        if (!text.empty() && !consume(text, ',')) return std::nullopt;
    }
    return from_runs(std::move(runs));
}

}  // namespace htrace
