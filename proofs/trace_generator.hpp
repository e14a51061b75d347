#pragma once
// Traces of the shape the merge produces, for the deadlock-freedom checker: random ones that are
// the same for the same seed, and hand-written edge cases.
//
// They need not come from a real program. What they keep is what the merge guarantees: every member
// of a communicator meets the same collectives on it, in the same order and with the same values
// (roots, buffer sizes); loops whose body holds a collective never iterate a different number of
// times on different ranks; communicator ids follow the tracer's rule (lowest free id from 2, per
// process). Point-to-point events are arbitrary: any participants, any peers.

#include "trace/event.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::proofs {

// A random trace of 1 to 12 ranks: sends of every kind (peers, tags and bytes exact, per rank or
// histograms, MPI_PROC_NULL among the peers), recorded receives and probes, waits and tests,
// collectives on the world and on split communicators, nested loops with exact, per-rank and
// histogram counts, and rank groups that diverge between two collectives.
Trace generate_trace(uint64_t seed);

struct NamedTrace {
    std::string name;
    Trace trace;
};

// Cases that a naive replay gets wrong: sends to self and to MPI_PROC_NULL, head-to-head blocking
// sends, sendrecv rings, the diverging groups of the paper's section 5.3, split communicators.
std::vector<NamedTrace> edge_case_traces();

}  // namespace htrace::proofs
