#pragma once
// The checks and their messages are listed in docs/trace-format.md (section 10, "Limits and the
// reader's checks"): a check added or changed here updates it.
// The reader's checks of a decoded trace against its header and itself (trace/limits.hpp says what
// they allow). read_trace_file and decode_trace run them on every trace, so that every tool reads
// traces through one validating reader: a damaged or hostile trace is refused with one line naming
// the field and the event ("corrupt: event 12 (MPI_Send): peer 70 is not a rank of a 64-rank
// trace"), before anything walks, prints or replays it.
//
// Events are numbered as the file holds them, from 1: a loop's body comes where the loop stands.

#include "trace/event.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace htrace {

// "" if the header keeps within the limits, else what is wrong with it ("corrupt: header: ...").
std::string check_header(const TraceHeader& header);

// What is wrong with one run of a rank list of a trace of `ranks` ranks (a rank outside 0..ranks - 1,
// a dimension with no member, more members than ranks), nullopt if nothing is.
std::optional<std::string> rank_run_problem(const RankRun& run, int64_t ranks);

// "" if the whole trace keeps within the limits and agrees with its header, else the first problem
// ("corrupt: event 12 (MPI_Send): ..."). Checks the header first.
std::string check_trace(const Trace& trace);

// The steps a walk of the trace takes at most (WalkCursor: each call of each participant, and each
// iteration of each loop, at the largest counts its values allow), saturating at UINT64_MAX.
uint64_t walk_steps(const Sequence& sequence);

// The calls a walk makes on average (loop counts at their means), and the calls the events say they
// stand for (the counts of their compute times): a traced run gives both alike.
double expected_calls(const Sequence& sequence);
double recorded_calls(const Sequence& sequence);

}  // namespace htrace
