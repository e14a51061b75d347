#pragma once
// The timeline a trace expects, without running anything (h-dump --otf2, --chrome-trace): each
// rank's schedule as replay would generate it at the trace's seed (replay/schedule.hpp: the same
// calls, peers and sizes a replay issues, drawn values included), each call taking its event's mean
// time inside the call and each gap the computation replay would spend. No rank waits for another
// here: a late partner's wait is inside the traced mean of the call that waited.

#include "timeline/rank_timeline.hpp"
#include "trace/event.hpp"

#include <string>

namespace htrace::replay {

// Gives `writer` every rank's timeline, in rank order, and finishes it. Refuses a trace whose ranks
// make more than `max_calls` calls in all, or whose ranks x walk steps exceed 10 x `max_calls` (the
// error; the writer then has an incomplete timeline).
std::string write_expected_timeline(const Trace& trace, uint64_t max_calls, timeline::TimelineWriter& writer);

}  // namespace htrace::replay
