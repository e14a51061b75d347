#pragma once
// h-merge's work: the partial files of ranks of a job that ended before MPI_Finalize (each an
// incomplete trace of one rank, trace.h.part.RANK) joined into one incomplete trace, merged in rank
// order by the merge the tree runs at MPI_Finalize. No MPI.

#include "trace/event.hpp"

#include <optional>
#include <string>
#include <vector>

namespace htrace {

struct PartsMergeResult {
    std::optional<Trace> trace;
    std::string error;  // one line: which input and what is wrong with it
};

// `parts`: incomplete traces of one run (the same run id, rank count and merge settings) holding
// different ranks; `names` names them for errors. Their order does not matter. The result holds
// every rank any part holds, says where each stopped, and is itself a part h-merge can take again.
PartsMergeResult merge_parts(std::vector<Trace> parts, const std::vector<std::string>& names);

}  // namespace htrace
