#pragma once
// Pulling apart by ranks what an earlier merge joined: the part of an event or loop that some of its
// ranks make, with those ranks' own values. A later merge needs it where ranks that one merge put in
// one event must meet different events of the other side (collective_instances.hpp: colours of a
// split whose instances two halves of the job joined differently), or where a loop around collectives
// ran a different number of times on different ranks and must be unrolled.

#include "trace/event.hpp"

#include <optional>

namespace htrace {

// The ranks both lists hold.
RankList intersect(const RankList& a, const RankList& b);

// `node` as only `keep` makes it (nullopt where none of them takes part): participants, per-rank
// values and per-rank loop counts restricted to them, time statistics scaled to their share.
std::optional<Node> restrict_to(const Node& node, const RankList& keep);

// `node` in parts of disjoint ranks, one per group (groups that take no part are left out), in the
// order of `groups`.
Sequence split_by(const Node& node, const std::vector<RankList>& groups);

}  // namespace htrace
