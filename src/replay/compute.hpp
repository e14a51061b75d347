#pragma once
// How recorded computation is re-enacted: one interface, with one implementation per way of running
// the replay (busy_compute.cpp on a real machine; the SimGrid build simulates it instead).

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace htrace::replay {

// Computation shorter than this has passed before a clock read could measure it (h-replay's own work
// between two calls takes longer): on a real machine it is not spun for, and the call before it
// need not note when it returned. Codes of short calls have millions of such gaps.
inline constexpr double kShortestSpunComputation = 50e-9;

// Marks where a replayed MPI call returned: the computation recorded before the next call counts
// from here.
void call_returned();

// Seconds on the replay's clock, for the time its calls take: the machine's, or the simulation's
// (read without MPI_Wtime, which SMPI charges smpi/wtime of simulated time for).
double clock_seconds();

// Spends `seconds` of computation since the last call returned, as the traced rank did between two
// calls. h-replay's own work between the two calls is part of that time: the tracer's work between
// calls was part of the recorded time too, and interpreting the trace must not add to the replay's.
void compute_for(double seconds);

// The traced time of a trace's header, as the defaults below take it: one that is not a finite
// number (a damaged header) counts as none.
inline double usable_traced_seconds(double traced_seconds)
{
    return std::isfinite(traced_seconds) && traced_seconds > 0 ? traced_seconds : 0.0;
}

// The default --max-compute: no gap of a genuine trace is longer than the run it was recorded in,
// so only a damaged or hostile trace's gaps are cut; at least a minute.
inline double default_max_compute(double traced_seconds)
{
    return std::max(60.0, usable_traced_seconds(traced_seconds));
}

// The default --stall-limit: a minute, or ten times the traced time; and at least twice
// `max_compute`, so that a rank waiting in a call for a peer that computes one (cut) gap is not
// stopped: computation itself is not watched, it is bounded.
inline double default_stall_limit(double traced_seconds, double max_compute)
{
    return std::max({60.0, 10 * usable_traced_seconds(traced_seconds), 2 * max_compute});
}

// The longest single computation gap replay spends (h-replay --max-compute): a trace's longer gaps,
// which a damaged or hostile trace may hold (10^6 s per call), are cut to it and counted, so that
// a replay cannot sleep for ever. Gaps that are not a number count as cut, to nothing.
class ComputeBound {
public:
    explicit ComputeBound(double longest = std::numeric_limits<double>::infinity()) : longest_(longest) {}

    // The seconds to spend for a recorded gap of `seconds`.
    double cut(double seconds)
    {
        if (seconds <= longest_) return seconds;
        ++gaps_cut_;
        longest_cut_ = std::max(longest_cut_, seconds);  // a NaN leaves it
        return seconds > longest_ ? longest_ : 0.0;
    }
    uint64_t gaps_cut() const { return gaps_cut_; }
    // The longest recorded gap that was cut (0 where none was).
    double longest_cut() const { return longest_cut_; }

private:
    double longest_;
    uint64_t gaps_cut_ = 0;
    double longest_cut_ = 0;
};

}  // namespace htrace::replay
