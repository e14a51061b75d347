#pragma once
// A compressed set of MPI ranks: nested start/count/stride runs, so the participants of an SPMD
// event cost the same bytes at 4 ranks as at 4096.

#include <cstdint>
#include <string>
#include <string_view>
#include <optional>
#include <vector>

namespace htrace {

using Rank = int32_t;

struct RankDimension {
    int32_t count;
    int32_t stride;
    bool operator==(const RankDimension&) const = default;
};

// {start + i0*d0.stride + i1*d1.stride + ... | 0 <= ik < dk.count}; dims[0] is the innermost.
struct RankRun {
    Rank start = 0;
    std::vector<RankDimension> dims;
    bool operator==(const RankRun&) const = default;
    int64_t size() const;
};

class RankList {
public:
    RankList() = default;
    explicit RankList(Rank rank);
    static RankList from_sorted(const std::vector<Rank>& ranks);  // ascending, no duplicates
    static RankList from_runs(std::vector<RankRun> runs);        // as read from a file

    bool empty() const { return runs_.empty(); }
    int64_t size() const;
    bool contains(Rank rank) const;
    std::vector<Rank> expand() const;  // ascending
    std::optional<int64_t> index_of(Rank rank) const;  // its position in expand(), if a member
    RankList unite(const RankList& other) const;
    const std::vector<RankRun>& runs() const { return runs_; }

    // "0-6^8:8,7-63:8": runs separated by commas; `a-b:s` the innermost dimension, `^count:stride`
    // each outer one.
    std::string to_string() const;
    static std::optional<RankList> parse(std::string_view text);

    bool operator==(const RankList&) const = default;

private:
    std::vector<RankRun> runs_;
};

}  // namespace htrace
