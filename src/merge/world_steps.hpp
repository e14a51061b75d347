#pragma once
// Steps cut at the world's collectives, the same on every rank (p = 0 only; phase_folding.hpp).
//
// An SPMD code calls the same collectives on the world in the same order on every rank, whatever
// its point-to-point calls: an adaptive code's time steps, the rounds that settle a refinement and
// the rebalances are one skeleton on every rank. The folding of the rest (loop_folding.hpp, and the
// anchors of phase_folding.cpp) follows the rank's own messages, so ranks whose neighbours differ
// fold their steps into loops of different shapes, which the merge across ranks cannot pair: a trace
// that grows with the ranks.
//
// Here the loops come from the skeleton alone. Each call of a blocking collective on the world is a
// unit: the collective and the calls before it since the previous unit (a unit that ends a loop's
// body also takes the calls after it, and those at the start of the body). The units' keys (call
// site and operation) fold into nested loops by repetition alone (X X, or one more copy of the loop
// before; loops of other counts alike, their count a histogram), which depends on nothing but the
// skeleton, so every rank gets the same loops. Then each unit of the folded skeleton merges the
// calls of every unit it stands for (merge_iterations): what some steps lack becomes a loop whose
// count includes 0.
//
// Only where the rank's collectives are all blocking collectives on the world and it makes no
// communicator, window or buffer (which steps must keep call for call), where the loops the folder
// made around collectives have exact counts, and where a unit's calls, made once and run in a loop
// of the folder's, land in one unit of the skeleton; otherwise nothing (phase_folding.cpp's anchors
// then fold the steps).

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <functional>
#include <optional>

namespace htrace {

// `fold_calls` folds the calls between two collectives of a unit (the steps within it: time steps
// between two rebalances) before the units merge.
std::optional<Sequence> fold_world_steps(const Sequence& seq, const MergeRule& rule, Rank rank,
                                         const std::function<Sequence(Sequence)>& fold_calls);

// Whether `node` is a call of a blocking collective on the world (where the steps are cut), and
// whether `node` holds one.
bool is_step_collective(const Node& node);
bool holds_step_collective(const Node& node);

}  // namespace htrace
