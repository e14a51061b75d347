#pragma once
// The inter-node merge at MPI_Finalize: ranks pair up over a binomial (radix-2) tree on the
// tracer's own communicator; each parent merges its child's trace into its own.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <mpi.h>

#include <optional>
#include <string>

namespace htrace {

struct ReduceResult {
    std::optional<Sequence> merged;  // at rank 0 of `comm` only
    std::string error;               // a child's trace could not be decoded
};

// `comm` must be the tracer's own communicator (every rank of the job, nobody else's messages).
ReduceResult reduce_over_tree(Sequence mine, MPI_Comm comm, const MergeRule& rule);

}  // namespace htrace
