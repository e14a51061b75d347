#include "trace/rank_times.hpp"

namespace htrace {
namespace {

RankSpread alone(double value, Rank rank) { return {value, rank, value, value, rank}; }

}  // namespace

std::vector<std::pair<const char*, const RankSpread*>> named_spreads(const RankTimes& times,
                                                                     const char* RankSpreadField::*name)
{
    std::vector<std::pair<const char*, const RankSpread*>> out;
    for (const RankSpreadField& field : kRankSpreadFields) out.emplace_back(field.*name, &(times.*field.member));
    if (times.tracer) out.emplace_back(kTracerSpreadField.*name, &*times.tracer);
    return out;
}

std::optional<RankTimes> own_rank_times(const Sequence& own, Rank rank, double tracer_seconds)
{
    double computation = 0, mpi = 0, io = 0;
    bool measured = true;
    for_each_event(own, [&](const Event& e) {
        // From MPI_Init's return to MPI_Finalize's call, as TraceHeader::traced_seconds.
        if (e.op == Op::Init) return;
        computation += e.compute.total();
        if (e.op == Op::Finalize) return;
        if (e.in_call.count != e.compute.count) measured = false;
        (operation_kind(e.op) == OperationKind::io ? io : mpi) += e.in_call.total();
    });
    if (!measured) return std::nullopt;
    const double whole = computation + mpi + io;
    RankTimes out;
    out.computation = alone(computation, rank);
    out.mpi = alone(mpi, rank);
    out.io = alone(io, rank);
    out.mpi_share = alone(whole > 0 ? mpi / whole : 0, rank);
    out.io_share = alone(whole > 0 ? io / whole : 0, rank);
    out.tracer = alone(tracer_seconds, rank);
    return out;
}

RankSpread combine(const RankSpread& a, uint64_t a_ranks, const RankSpread& b, uint64_t b_ranks)
{
    if (a_ranks == 0) return b;
    if (b_ranks == 0) return a;
    RankSpread out;
    // Ties go to the lower rank, whatever order the subtrees meet in.
    const bool a_least = a.min < b.min || (a.min == b.min && a.min_rank < b.min_rank);
    out.min = a_least ? a.min : b.min;
    out.min_rank = a_least ? a.min_rank : b.min_rank;
    const bool a_most = a.max > b.max || (a.max == b.max && a.max_rank < b.max_rank);
    out.max = a_most ? a.max : b.max;
    out.max_rank = a_most ? a.max_rank : b.max_rank;
    out.mean = (a.mean * double(a_ranks) + b.mean * double(b_ranks)) / double(a_ranks + b_ranks);
    return out;
}

RankTimes combine(const RankTimes& a, uint64_t a_ranks, const RankTimes& b, uint64_t b_ranks)
{
    if (a_ranks == 0) return b;
    if (b_ranks == 0) return a;
    RankTimes out;
    for (const RankSpreadField& field : kRankSpreadFields) {
        out.*field.member = combine(a.*field.member, a_ranks, b.*field.member, b_ranks);
    }
    if (a.tracer && b.tracer) out.tracer = combine(*a.tracer, a_ranks, *b.tracer, b_ranks);
    return out;
}

std::optional<RankTimes> combine(const std::optional<RankTimes>& a, uint64_t a_ranks,
                                 const std::optional<RankTimes>& b, uint64_t b_ranks)
{
    if (!a || !b) return std::nullopt;
    return combine(*a, a_ranks, *b, b_ranks);
}

}  // namespace htrace
