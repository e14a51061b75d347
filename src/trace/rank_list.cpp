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
// dimension, until nothing joins. In place: lists are made on the merge's hot path.
void fold_runs(std::vector<RankRun>& runs)
{
    bool changed = true;
    while (changed) {
        changed = false;
        size_t kept = 0;
        for (size_t i = 0; i < runs.size();) {
            size_t j = i + 1;
            if (j < runs.size() && runs[j].dims == runs[i].dims) {
                const int64_t step = int64_t(runs[j].start) - runs[i].start;
                while (j + 1 < runs.size() && runs[j + 1].dims == runs[i].dims &&
                       int64_t(runs[j + 1].start) - runs[j].start == step) {
                    ++j;
                }
                runs[i].dims.push_back({static_cast<int32_t>(j - i + 1), static_cast<int32_t>(step)});
                if (kept != i) runs[kept] = std::move(runs[i]);
                ++kept;
                i = j + 1;
                changed = true;
                continue;
            }
            if (kept != i) runs[kept] = std::move(runs[i]);
            ++kept;
            ++i;
        }
        runs.resize(kept);
    }
}

// The runs of ascending ranks, before folding.
void runs_of_sorted(std::span<const Rank> ranks, std::vector<RankRun>& runs)
{
    runs.clear();
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
    if (runs.size() > 1) fold_runs(runs);
}

// Appends the packed form of `runs` (RankList's; nothing for none) to `out`.
void append_packed(const std::vector<RankRun>& runs, std::vector<uint8_t>& out)
{
    if (runs.empty()) return;
    pack_unsigned(out, runs.size());
    for (const auto& run : runs) {
        pack_signed(out, run.start);
        pack_unsigned(out, run.dims.size());
        for (const auto& dim : run.dims) {
            pack_unsigned(out, static_cast<uint32_t>(dim.count));
            pack_signed(out, dim.stride);
        }
    }
}

// The packed form of `runs` (RankList's).
PackedBytes packed(const std::vector<RankRun>& runs)
{
    if (runs.empty()) return {};
    // One scratch buffer per thread: packing is on the merge's hot path, and PackedBytes copies it.
    thread_local std::vector<uint8_t> out;
    out.clear();
    append_packed(runs, out);
    return PackedBytes(out);
}

}  // namespace

int64_t RankRun::size() const
{
    int64_t n = 1;
    for (const auto& d : dims) n *= d.count;
    return n;
}

void RankList::unpack_run(Unpacker& in, RankRun& run)
{
    run.start = static_cast<Rank>(in.signed_int());
    run.dims.resize(in.unsigned_int());
    for (auto& dim : run.dims) {
        dim.count = static_cast<int32_t>(static_cast<uint32_t>(in.unsigned_int()));
        dim.stride = static_cast<int32_t>(in.signed_int());
    }
}

RankList::RankList(Rank rank) : packed_(packed({RankRun{rank, {}}})) {}

RankList RankList::from_sorted(const std::vector<Rank>& ranks)
{
    thread_local std::vector<RankRun> runs;
    runs_of_sorted(ranks, runs);
    return from_runs(runs);
}

void RankList::pack_sorted(std::span<const Rank> ranks, std::vector<uint8_t>& out)
{
    if (ranks.size() == 1) {  // the most common list: one run of one rank
        pack_unsigned(out, 1);
        pack_signed(out, ranks[0]);
        pack_unsigned(out, 0);
        return;
    }
    thread_local std::vector<RankRun> runs;
    runs_of_sorted(ranks, runs);
    if (runs.empty()) pack_unsigned(out, 0);
    append_packed(runs, out);
}

RankList RankList::from_runs(const std::vector<RankRun>& runs)
{
    RankList list;
    list.packed_ = packed(runs);
    return list;
}

std::vector<RankRun> RankList::runs() const
{
    std::vector<RankRun> out;
    for_each_run([&](const RankRun& run) { out.push_back(run); });
    return out;
}

Rank RankList::first() const
{
    Unpacker in(packed_.bytes());
    if (in.at_end() || in.unsigned_int() == 0) return 0;
    return static_cast<Rank>(in.signed_int());
}

int64_t RankList::size() const
{
    int64_t n = 0;
    for_each_run([&](const RankRun& run) { n += run.size(); });
    return n;
}

bool RankList::contains(Rank rank) const
{
    bool found = false;
    for_each_run([&](const RankRun& run) { found = found || run_contains(run, rank); });
    return found;
}

std::optional<int64_t> RankList::index_of(Rank rank) const
{
    Unpacker in(packed_.bytes());
    return in.at_end() ? std::nullopt : index_in_packed(in, rank);
}

int64_t RankList::size_of_packed(Unpacker& in)
{
    const uint64_t n = in.unsigned_int();
    RankRun run;
    int64_t size = 0;
    for (uint64_t i = 0; i < n; ++i) {
        unpack_run(in, run);
        size += run.size();
    }
    return size;
}

std::optional<int64_t> RankList::index_in_packed(Unpacker& in, Rank rank)
{
    const uint64_t n = in.unsigned_int();
    RankRun run;
    bool member = false;
    // Runs may interleave ("0-6^8:8,7-63:8"): the index counts the members below `rank` in every run.
    int64_t below = 0;
    for (uint64_t i = 0; i < n; ++i) {
        unpack_run(in, run);
        member = member || run_contains(run, rank);
        below += members_below(run, run.dims.size(), run.start, rank);
    }
    return member ? std::optional<int64_t>(below) : std::nullopt;
}

void RankList::pack(std::vector<uint8_t>& out) const
{
    const auto bytes = packed_.bytes();
    if (bytes.empty()) {
        pack_unsigned(out, 0);
        return;
    }
    out.insert(out.end(), bytes.begin(), bytes.end());
}

RankList RankList::unpack(Unpacker& in)
{
    // pack() wrote the packed form itself: read past it and keep its bytes, rather than make the
    // runs and pack them again (a value's entries are read at every merge of the tree).
    const uint8_t* start = in.position();
    const uint64_t n = in.unsigned_int();
    RankRun run;
    for (uint64_t i = 0; i < n; ++i) unpack_run(in, run);
    RankList list;
    if (n > 0) list.packed_ = PackedBytes(std::span<const uint8_t>(start, in.position()));
    return list;
}

std::vector<Rank> RankList::expand() const
{
    std::vector<Rank> out;
    expand(out);
    return out;
}

void RankList::expand(std::vector<Rank>& out) const
{
    Unpacker in(packed_.bytes());
    if (in.at_end()) {
        out.clear();
        return;
    }
    expand_packed(in, out);
}

void RankList::expand_packed(Unpacker& in, std::vector<Rank>& out)
{
    out.clear();
    const uint64_t n = in.unsigned_int();
    RankRun run;
    for (uint64_t i = 0; i < n; ++i) {
        unpack_run(in, run);
        if (run.dims.empty()) {
            out.push_back(run.start);
        } else {
            expand_run(run, run.dims.size() - 1, run.start, out);
        }
    }
    // Runs come in order of their starts, each ascending; only interleaved runs need sorting.
    if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
}

RankList RankList::unite(const RankList& other) const
{
    if (other.empty()) return *this;
    if (empty()) return other;
    // Per thread, as from_sorted's: the merge unites every pair of events it merges.
    thread_local std::vector<Rank> a;
    thread_local std::vector<Rank> b;
    thread_local std::vector<Rank> all;
    expand(a);
    other.expand(b);
    all.clear();
    std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(all));
    return from_sorted(all);
}

std::string RankList::to_string() const
{
    std::string out;
    for_each_run([&](const RankRun& run) {
        if (!out.empty()) out += ',';
        out += std::to_string(run.start);
        if (run.dims.empty()) return;
        const auto& inner = run.dims[0];
        out += '-' + std::to_string(int64_t(run.start) + int64_t(inner.count - 1) * inner.stride);
        if (inner.stride != 1) out += ':' + std::to_string(inner.stride);
        for (size_t d = 1; d < run.dims.size(); ++d) {
            out += '^' + std::to_string(run.dims[d].count) + ':' + std::to_string(run.dims[d].stride);
        }
    });
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
    return from_runs(runs);
}

}  // namespace htrace
