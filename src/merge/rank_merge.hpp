#pragma once
// Inter-node merge of two ranks' (or rank groups') folded traces into one: matching is recursive
// (loops body by body) and a weighted longest common subsequence chooses what aligns; matched
// events get the union of their participants, values that differ between the two sides are kept
// per rank (lossless) unless the merge precision lets them merge into a histogram. Collectives on the same communicator merge even from different call sites.
// Every rank's own order of events survives.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <utility>

namespace htrace {

// `a` and `b` come from disjoint sets of ranks. Values that differ merge into histograms where the
// rule allows, and are kept per rank where it does not. Calls one side lacks keep their ranks;
// where the rule merges a count with 0 (p = 0), those that any rank could make (point-to-point
// calls, completions and collectives on the world) become every rank's, run a number of times
// drawn from what their ranks ran and 0 for the others, so that ranks alike in distribution are
// one event. Not where some rank of the job cancels requests (`job_cancels`, cancels_requests):
// which request a cancel hits is a rank's own history, which replay must keep.
Sequence merge_ranks(Sequence a, Sequence b, const MergeRule& rule = {}, bool job_cancels = false);
// Whether a rank's trace cancels a request (MPI_Cancel).
bool cancels_requests(const Sequence& seq);

// The same alignment within one rank (phase_folding.hpp): `a` and `b` are stretches of its calls
// that run `weight_a` and `weight_b` times, merged into one body. Values merge under the rule (there
// are no ranks to keep them apart by), and a node one side lacks becomes a loop whose count is a
// histogram that includes 0. Only for a rule that merges a count with 0 (p = 0).
Sequence merge_iterations(Sequence a, Sequence b, uint64_t weight_a, uint64_t weight_b, const MergeRule& rule,
                          Rank rank);
// Where that merge would align `b` with `a`: `b`'s first aligned node and one past its last
// ({b.size(), 0} if none aligns).
std::pair<size_t, size_t> aligned_range(const Sequence& a, const Sequence& b, const MergeRule& rule);

// The ranks taking part anywhere in a node.
RankList participants(const Node& node);

}  // namespace htrace
