#pragma once
// A compressed set of MPI ranks: nested start/count/stride runs, so the participants of an SPMD
// event cost the same bytes at 4 ranks as at 4096.

#include "trace/packed.hpp"

#include <boost/container/small_vector.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <span>
#include <vector>

namespace htrace {

using Rank = int32_t;

struct RankDimension {
    int32_t count;
    int32_t stride;
    bool operator==(const RankDimension&) const = default;
};

// {start + i0*d0.stride + i1*d1.stride + ... | 0 <= ik < dk.count}; dims[0] is the innermost. Runs
// rarely nest more than a few dimensions: those are kept without an allocation.
struct RankRun {
    Rank start = 0;
    boost::container::small_vector<RankDimension, 4> dims;
    bool operator==(const RankRun&) const = default;
    int64_t size() const;
};

// Held packed (trace/packed.hpp) as the file stores it: the number of runs, then each run's start,
// its number of dimensions and theirs (count, stride).
class RankList {
public:
    RankList() = default;
    explicit RankList(Rank rank);
    static RankList from_sorted(const std::vector<Rank>& ranks);  // ascending, no duplicates
    // Appends what from_sorted(ranks).pack(out) would, without making the list.
    static void pack_sorted(std::span<const Rank> ranks, std::vector<uint8_t>& out);
    static RankList from_runs(const std::vector<RankRun>& runs);  // as read from a file

    bool empty() const { return packed_.empty(); }
    int64_t size() const;
    bool contains(Rank rank) const;
    std::vector<Rank> expand() const;  // ascending
    void expand(std::vector<Rank>& out) const;  // the same into `out`, reusing its memory
    std::optional<int64_t> index_of(Rank rank) const;  // its position in expand(), if a member
    RankList unite(const RankList& other) const;
    std::vector<RankRun> runs() const;
    Rank first() const;  // the first run's start (0 for an empty list)
    // Calls `visit(const RankRun&)` for each run, in order, without allocating for the common runs.
    template <class Visitor>
    void for_each_run(Visitor&& visit) const
    {
        Unpacker in(packed_.bytes());
        const uint64_t n = in.at_end() ? 0 : in.unsigned_int();
        RankRun run;
        for (uint64_t i = 0; i < n; ++i) {
            unpack_run(in, run);
            visit(run);
        }
    }

    // "0-6^8:8,7-63:8": runs separated by commas; `a-b:s` the innermost dimension, `^count:stride`
    // each outer one.
    std::string to_string() const;
    static std::optional<RankList> parse(std::string_view text);

    // The packed form, for values that keep lists among other packed data (trace/value.hpp).
    void pack(std::vector<uint8_t>& out) const;
    // Reads one packed list from `in`, as pack() wrote it.
    static RankList unpack(Unpacker& in);
    // The same list's size, or where `rank` is in it, reading it from `in` without making it.
    static int64_t size_of_packed(Unpacker& in);
    // The same list's ranks, ascending, into `out` (as expand()).
    static void expand_packed(Unpacker& in, std::vector<Rank>& out);
    static std::optional<int64_t> index_in_packed(Unpacker& in, Rank rank);

    bool operator==(const RankList&) const = default;

private:
    static void unpack_run(Unpacker& in, RankRun& run);

    PackedBytes packed_;
};

}  // namespace htrace
