#pragma once
// The precision rule (MERGE_PRECISION = p): two values merge when every pair of values they stand
// for satisfies |a - b| <= (100 - p)/100 * max(|a|, |b|); merged values become a histogram from then
// on. p = 100 merges only what is equal (lossless); p = 0 merges everything. Categorical values
// (communicators, roots, colours, keys) never merge unless equal.

#include "histogram/histogram.hpp"
#include "trace/event.hpp"

#include <cstdint>
#include <limits>
#include <optional>

namespace htrace {

struct MergeRule {
    int precision = 100;
    HistogramConfig histogram;
    // Across ranks, a difference in computation time before an event that adds up to less than this
    // per rank over the run is merged away (rank_compute.hpp); the tracer takes a share of the
    // traced time. Infinite: ranks' times always merge.
    double significant_compute_seconds = std::numeric_limits<double>::infinity();
};

// The significant_compute_seconds of a job whose slowest rank traced `traced_seconds`: 1% of it, or
// a millisecond. A smaller difference moves a replay by less, and a millisecond is below what a
// replay's timing can show. The tracer at MPI_Finalize and h-merge use it alike.
double significant_compute_seconds(double traced_seconds);

// Whether all values of `a` and `b` together may stand as one (for the role's kind of value).
bool may_merge(const Value& a, const Value& b, Role role, const MergeRule& rule);
bool may_merge_iterations(const Value& a, const Value& b, const MergeRule& rule);

// One side of a merge: a value, how many calls (or loop instances) it stands for, and the rank an
// exact value came from (for the histogram's min and max).
struct Weighted {
    const Value& value;
    uint64_t weight;
    Rank rank;
};

// What an exact value of `role` adds to a histogram: itself, but for completed sets. Encoded sets
// that differ are not near each other in any useful sense (a draw between two bitmasks names
// requests no call completed), so a histogram of them keeps how many requests each call completed,
// as "the k oldest" (trace/completion_set.hpp).
int64_t histogram_value(int64_t value, Role role);

// `a` and `b` as one value: `a` itself when equal, else a histogram of both (which must be allowed
// by may_merge). Endpoints keep the exact set of values seen. The histogram is alike on every rank
// where both are (Value): right for iterations of the same ranks; a merge across ranks must also
// check that the two were equal (rank_merge.cpp).
Value merge_values(Weighted a, Weighted b, Role role, const MergeRule& rule);

// `v` alone as a histogram (what it would add to a merge).
Value as_histogram(Weighted v, Role role, const MergeRule& rule);

// How many times a loop's body runs in `runs` runs of the loop (at least once), for weighting what
// the body stands for. A histogram count stands for its mean; the product is rounded only once,
// so that optional calls (a count that is mostly 0) keep their weight. `but_last`: how many times
// what the last iteration leaves out runs (Loop::last_leaves_out).
uint64_t body_runs(const Value& iterations, uint64_t runs, bool but_last = false);

}  // namespace htrace
