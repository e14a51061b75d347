#pragma once
// Where each rank's time went (TraceHeader::rank_times): one rank's, from its own events before they
// merge, and the spreads of several ranks combined, as the tracer's end-of-run summary and h-merge
// gather them.

#include "trace/event.hpp"

#include <cstdint>
#include <optional>

namespace htrace {

// One rank's times from its own events, from MPI_Init's return to MPI_Finalize's call: each spread
// is that rank's value alone. Nullopt where some call of the rank's has no time in calls
// (MPI_Finalize aside, which never has): the shares would leave its time out.
std::optional<RankTimes> own_rank_times(const Sequence& own, Rank rank);

// The spreads of ranks `a` (`a_ranks` of them) and `b` together.
RankSpread combine(const RankSpread& a, uint64_t a_ranks, const RankSpread& b, uint64_t b_ranks);
RankTimes combine(const RankTimes& a, uint64_t a_ranks, const RankTimes& b, uint64_t b_ranks);

// Of `a` and `b`, nullopt where either is (some rank's times are unknown); `a_ranks` and `b_ranks`
// as above.
std::optional<RankTimes> combine(const std::optional<RankTimes>& a, uint64_t a_ranks,
                                 const std::optional<RankTimes>& b, uint64_t b_ranks);

}  // namespace htrace
