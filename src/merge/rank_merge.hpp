#pragma once
// Inter-node merge of two ranks' (or rank groups') folded traces into one: matching is recursive
// (loops body by body) and a weighted longest common subsequence chooses what aligns; matched
// events get the union of their participants, values that differ between the two sides are kept
// per rank (lossless) unless the merge precision lets them merge into a histogram. Collectives on the same communicator merge even from different call sites.
// Every rank's own order of events survives.

#include "merge/precision.hpp"
#include "trace/event.hpp"

namespace htrace {

// `a` and `b` come from disjoint sets of ranks. Values that differ merge into histograms where the
// rule allows, and are kept per rank where it does not.
Sequence merge_ranks(Sequence a, Sequence b, const MergeRule& rule = {});

// The ranks taking part anywhere in a node.
RankList participants(const Node& node);

}  // namespace htrace
