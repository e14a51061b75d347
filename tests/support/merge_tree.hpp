#pragma once
// The ranks' traces merged pairwise as the radix tree does at MPI_Finalize on one host (or one rank
// a host), for merge unit tests.

#include "merge/rank_merge.hpp"

#include <utility>
#include <vector>

namespace htrace::test {

inline Sequence merge_tree(std::vector<Sequence> traces, const MergeRule& rule = {})
{
    for (size_t step = 1; step < traces.size(); step *= 2) {
        for (size_t r = 0; r + step < traces.size(); r += 2 * step) {
            traces[r] = merge_ranks(std::move(traces[r]), std::move(traces[r + step]), rule);
        }
    }
    return std::move(traces[0]);
}

}  // namespace htrace::test
