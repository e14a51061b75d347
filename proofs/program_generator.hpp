#pragma once
// Traces of generated MPI programs, for the deadlock-freedom checker: unlike trace_generator.hpp's
// arbitrary traces, these are faithful records of runs that completed, so they exercise causal
// replay (src/replay/schedule.hpp) as h-replay meets it.
//
// A program is a random composition of communication patterns that real codes use (token rings,
// wavefront pipelines, master/worker with wildcard receives, halo exchanges, Sendrecv rings,
// Waitany/Waitsome/Test loops over varying numbers of requests, cancelled receives, collectives,
// split and duplicated communicators), on 1 to 12 ranks, reproducible from a seed. Each is
// deadlock-free under rendezvous semantics by construction. It runs in mpi_simulator.hpp under a
// seeded random scheduler; each rank's calls are recorded as the tracer records them, folded into
// loops at the run's merge precision (merge/loop_folding.hpp) and merged over the binomial tree
// (merge/rank_merge.hpp, paired as merge/radix_reduce.cpp pairs ranks), through the file format
// as the tracer's ranks and h-replay see it.

#include "merge/precision.hpp"
#include "proofs/mpi_simulator.hpp"
#include "trace/event.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::proofs {

struct ProgramRun {
    uint64_t seed = 0;
    int32_t ranks = 1;
    MergeRule rule;              // the tracer's MERGE_PRECISION and histogram settings for this run
    std::string description;     // the program's phases, one line
    std::vector<sim::RankRecord> records;  // per rank: recorded calls and the truth
    uint64_t steps = 0;          // scheduler steps of the run
};

// How large generated programs may get (the defaults are the checker's; smaller ones find small
// reproducers).
struct ProgramLimits {
    int32_t max_ranks = 12;
    int max_blocks = 3;      // blocks of phases, each on the world or on a split or duplicated communicator
    int max_phases = 3;      // per block
    int max_repeats = 3;     // of a block
    int max_iterations = 4;  // laps, sweeps, time steps within a phase
};

// A random program of seed `seed`, run once (its own scheduler seed derives from it). Throws
// std::runtime_error if the program misbehaves in the simulator (a generator bug).
ProgramRun run_generated_program(uint64_t seed, const ProgramLimits& limits = {});

// A blocking token ring (rank 0 sends first in each lap, the others receive then send) of `laps` laps
// at precision 100: the shape of the negative controls.
ProgramRun run_token_ring(int32_t ranks, int laps, uint64_t seed);

// The trace the tracer would write of `run` (of its records as they are now, so a test may edit them
// first): each rank's calls folded with the run's rule, given their participant, merged over the
// binomial tree with each child's trace passed through the sequence encoding, and the result
// through the trace file's encoding.
Trace trace_of_run(const ProgramRun& run);

}  // namespace htrace::proofs
