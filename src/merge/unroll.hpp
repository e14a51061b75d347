#pragma once
// Unrolling loops back into copies of their body, for merges that need the calls one by one.

#include "trace/event.hpp"

#include <cstddef>

namespace htrace {

// Nodes in `seq`, loop bodies included (what unrolling a loop costs per iteration).
size_t nested_size(const Sequence& seq);

// Loops of exact count whose copies together stay below this many nodes are unrolled.
inline constexpr size_t kMaxUnrolledNodes = 4096;

// Whether `node` is a loop of exact count whose unrolled copies stay below kMaxUnrolledNodes.
bool may_unroll(const Node& node);

// Scales the time statistics of `seq`, which stand for `whole` equal runs, to `part` of them (fewer
// calls, the same mean and spread).
void keep_share(Sequence& seq, uint64_t part, uint64_t whole);

// Appends the loop's body to `out` as many times as it ran; each copy's time statistics get one
// iteration's share, so that together they stand for what the loop did.
void append_unrolled(Sequence& out, Loop loop);

}  // namespace htrace
