#pragma once
// Computation time across ranks. Where ranks that merge into one event computed for clearly
// different times before it (a load imbalance: one rank owns more cells, or runs on a slower core),
// they keep their own statistics, so that replay makes the fast ranks wait for the slow one as they
// did; ranks that computed alike share one. "Clearly": the means differ by more than
// kComputeTolerance of the larger, and by enough, over the calls a rank makes, to add up to the
// rule's significant_compute_seconds. At most kMaxComputeGroups groups per event: beyond, the
// closest merge.

#include "merge/precision.hpp"
#include "trace/event.hpp"

namespace htrace {

inline constexpr double kComputeTolerance = 0.05;
inline constexpr size_t kMaxComputeGroups = 8;

// `from`'s times into `into`'s: the computation's over all ranks and the groups of ranks whose
// computation differs, and the time in the calls (over all ranks only). Both events still have
// their own ranks (the caller unites them afterwards).
void merge_compute(Event& into, const Event& from, const MergeRule& rule);

}  // namespace htrace
