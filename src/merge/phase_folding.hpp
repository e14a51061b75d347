#pragma once
// Folding of a rank's phases whose calls do not align, at the end of its run (p = 0 only).
//
// Loop folding (loop_folding.hpp) folds repetition that matches call for call. An adaptive code
// repeats a time step whose calls differ from step to step: how many messages, and which calls at
// all (a Waitany loop one step, a Waitsome the next, a rebalance every few steps). At a precision
// that merges a count with 0 (p = 0: |n - 0| <= (100 - p)/100 * n only there), such steps are one
// loop: the rank's top-level sequence is cut into stretches, each starting at one call site (the
// anchor), and the stretches merge one by one into one body (merge_iterations): calls that align
// merge their values into histograms, a call a stretch lacks becomes a loop whose count is a
// histogram that includes 0, and a call made once aligns with a loop of that call. Of the rank's
// most frequent top-level call sites, the anchor is the one that makes the sequence smallest; the
// sequence is kept as it is where none makes it smaller.
//
// Steps that hold a collective must start at a collective on the world: every rank then counts as
// many steps, which replay needs (it draws the count of a loop around a collective once for all
// ranks). Within each such step, the steps between its collectives fold the same way (time steps
// between two rebalances). Steps that make or free communicators or windows, and ranks that cancel
// requests, are not folded: which communicator a call names and which request a cancel hits are
// the rank's own history.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <functional>

namespace htrace {

// `seq`: one rank's folded calls (LoopFolder::finish). Unchanged unless the rule merges a count
// with 0. `refold`: where the steps are not cut at the world's collectives (world_steps.hpp), the
// loop folder's folding of `seq` with loops around them merging whatever their counts.
Sequence fold_phases(Sequence seq, const MergeRule& rule, Rank rank,
                     const std::function<Sequence(Sequence)>& refold = {});

}  // namespace htrace
