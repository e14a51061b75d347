#pragma once
// How recorded computation is re-enacted: one interface, with one implementation per way of running
// the replay (busy_compute.cpp on a real machine; the SimGrid build simulates it instead).

namespace htrace::replay {

// Computation shorter than this has passed before a clock read could measure it (h-replay's own work
// between two calls takes longer): on a real machine it is not spun for, and the call before it
// need not note when it returned. Codes of short calls have millions of such gaps.
inline constexpr double kShortestSpunComputation = 50e-9;

// Marks where a replayed MPI call returned: the computation recorded before the next call counts
// from here.
void call_returned();

// Spends `seconds` of computation since the last call returned, as the traced rank did between two
// calls. h-replay's own work between the two calls is part of that time: the tracer's work between
// calls was part of the recorded time too, and interpreting the trace must not add to the replay's.
void compute_for(double seconds);

}  // namespace htrace::replay
