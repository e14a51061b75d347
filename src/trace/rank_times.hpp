#pragma once
// Where each rank's time went (TraceHeader::rank_times): one rank's, from its own events before they
// merge, and the spreads of several ranks combined, as the tracer's end-of-run summary and h-merge
// gather them.

#include "trace/event.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace htrace {

// The spreads every RankTimes has, in the order the file and the end-of-run summary keep them: the
// key h-dump names each by, and the words the reader's checks use. RankTimes::tracer, which older
// files lack, follows them wherever it is kept.
struct RankSpreadField {
    const char* key;
    const char* label;
    RankSpread RankTimes::*member;
};
inline constexpr std::array<RankSpreadField, 5> kRankSpreadFields{{
    {"computation", "computation", &RankTimes::computation},
    {"mpi", "time in MPI", &RankTimes::mpi},
    {"io", "time in I/O", &RankTimes::io},
    {"mpi_share", "share in MPI", &RankTimes::mpi_share},
    {"io_share", "share in I/O", &RankTimes::io_share},
}};
inline constexpr RankSpreadField kTracerSpreadField{"tracer", "time in the tracer", nullptr};

// Every spread `times` has, the tracer's last where it has it, each named by `name`
// (&RankSpreadField::key or ::label).
std::vector<std::pair<const char*, const RankSpread*>> named_spreads(const RankTimes& times,
                                                                     const char* RankSpreadField::*name);

// One rank's times from its own events, from MPI_Init's return to MPI_Finalize's call, and the
// `tracer_seconds` it spent recording them: each spread is that rank's value alone. Nullopt where
// some call of the rank's has no time in calls (MPI_Finalize aside, which never has): the shares
// would leave its time out.
std::optional<RankTimes> own_rank_times(const Sequence& own, Rank rank, double tracer_seconds);

// The spreads of ranks `a` (`a_ranks` of them) and `b` together; the tracer's only where both have it.
RankSpread combine(const RankSpread& a, uint64_t a_ranks, const RankSpread& b, uint64_t b_ranks);
RankTimes combine(const RankTimes& a, uint64_t a_ranks, const RankTimes& b, uint64_t b_ranks);

// Of `a` and `b`, nullopt where either is (some rank's times are unknown); `a_ranks` and `b_ranks`
// as above.
std::optional<RankTimes> combine(const std::optional<RankTimes>& a, uint64_t a_ranks,
                                 const std::optional<RankTimes>& b, uint64_t b_ranks);

}  // namespace htrace
