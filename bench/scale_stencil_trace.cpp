// Writes a trace of tests/mpi/programs/stencil.c at any rank count from a real trace of it at another,
// for simulations at rank counts this machine cannot trace with the real MPI (h-replay-smpi at 1024
// and 4096 ranks: bench/RESULTS.md, issue 28).
//
//     scale-stencil-trace TEMPLATE.h RANKS OUT.h
//
// The stencil's calls are the same on every rank; only the halo peers depend on where a rank sits in
// the MPI_Dims_create grid. So every event keeps its parameters, its call site and its mean compute
// time, its rank list becomes all RANKS ranks, and each per-rank peer is recomputed for the new grid
// in the direction it had in the template (north, south, west or east: read off an inner rank). The
// template must be a complete lossless stencil trace (one rank list for all, no per-rank compute
// groups); before anything is written, the direction of each peer is checked by rebuilding the
// template's own values from it, which must give them exactly.
#include "trace/trace_file.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace htrace;

// MPI_Dims_create(ranks, 2): the two most balanced factors, the larger first; row-major.
struct Grid {
    int64_t rows = 0;
    int64_t cols = 0;
    explicit Grid(int64_t ranks)
    {
        cols = static_cast<int64_t>(std::sqrt(static_cast<double>(ranks)));
        while (cols > 1 && ranks % cols != 0) --cols;
        rows = ranks / cols;
    }
    int64_t ranks() const { return rows * cols; }
};

// A neighbour as the stencil computes it by hand: one row or column away, PROC_NULL past the edge.
struct Direction {
    int64_t row_step = 0;
    int64_t col_step = 0;

    std::optional<int64_t> neighbour(const Grid& grid, int64_t rank) const
    {
        const int64_t row = rank / grid.cols + row_step;
        const int64_t col = rank % grid.cols + col_step;
        if (row < 0 || row >= grid.rows || col < 0 || col >= grid.cols) return std::nullopt;
        return row * grid.cols + col;
    }

    // The per-rank value the trace stores: (peer - me) mod size, or PROC_NULL.
    Value value(const Grid& grid) const
    {
        std::vector<PerRankValue> entries;
        for (int64_t rank = 0; rank < grid.ranks(); ++rank) {
            const auto peer = neighbour(grid, rank);
            const int64_t stored = peer ? (*peer - rank + grid.ranks()) % grid.ranks() : kProcNull;
            entries.push_back({stored, RankList(static_cast<Rank>(rank))});
        }
        return Value(entries);
    }
};

std::optional<Direction> direction_of(const Value& value, const Grid& grid)
{
    // Rank (1, 1) has a neighbour on every side when the grid is at least 3 x 3.
    const int64_t inner = grid.cols + 1;
    const auto stored = value.value_for(static_cast<Rank>(inner));
    if (!stored || *stored < 0) return std::nullopt;
    const int64_t peer = (inner + *stored) % grid.ranks();
    for (const Direction d : {Direction{-1, 0}, Direction{1, 0}, Direction{0, -1}, Direction{0, 1}}) {
        if (d.neighbour(grid, inner) == peer) return d;
    }
    return std::nullopt;
}

struct Scaler {
    Grid from;
    Grid to;
    RankList all_ranks;
    std::string error;

    void scale(Sequence& sequence)
    {
        for (Node& node : sequence) {
            if (!error.empty()) return;
            if (node.is_loop()) {
                if (!node.loop().iterations.is_exact()) error = "a loop whose iteration count differs between ranks";
                scale(node.loop().body);
            } else {
                scale(node.event());
            }
        }
    }

    void scale(Event& event)
    {
        const std::string name(operation_name(event.op));
        if (event.ranks.size() != from.ranks()) {
            error = name + ": not every rank made it";
            return;
        }
        if (!event.compute_by_rank.empty()) {
            error = name + ": ranks whose compute times differ";
            return;
        }
        for (Param& param : event.params) {
            if (param.value.is_exact()) continue;
            if (!param.value.is_per_rank() || !role_is_relative(param.role)) {
                error = name + ": a " + std::string(role_name(param.role)) + " that is not one value for all ranks";
                return;
            }
            const auto direction = direction_of(param.value, from);
            if (!direction || !(direction->value(from) == param.value)) {
                error = name + ": a peer that is not a stencil neighbour";
                return;
            }
            param.value = direction->value(to);
        }
        event.ranks = all_ranks;
        // As many calls as the new rank count makes, with the template's mean and spread.
        const double factor = static_cast<double>(to.ranks()) / static_cast<double>(from.ranks());
        event.compute.count = event.compute.count / static_cast<uint64_t>(from.ranks()) * static_cast<uint64_t>(to.ranks());
        event.compute.m2 *= factor;
    }
};

}  // namespace

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: scale-stencil-trace TEMPLATE.h RANKS OUT.h\n");
        return 2;
    }
    const std::string template_path = argv[1];
    const long ranks = std::strtol(argv[2], nullptr, 10);
    DecodeResult read = read_trace_file(template_path);
    if (!read.trace) {
        std::fprintf(stderr, "scale-stencil-trace: %s: %s\n", template_path.c_str(), read.error.c_str());
        return 1;
    }
    Trace trace = std::move(*read.trace);
    const Grid from(trace.header.ranks);
    const Grid to(ranks);
    if (from.rows < 3 || from.cols < 3 || to.rows < 3 || to.cols < 3 || trace.header.incomplete() ||
        trace.header.precision != 100) {
        std::fprintf(stderr, "scale-stencil-trace: needs a complete lossless trace and rank counts whose grids "
                     "are at least 3 x 3\n");
        return 1;
    }
    std::vector<Rank> every_rank;
    for (Rank rank = 0; rank < static_cast<Rank>(ranks); ++rank) every_rank.push_back(rank);
    Scaler scaler{from, to, RankList::from_sorted(every_rank), {}};
    scaler.scale(trace.body);
    if (!scaler.error.empty()) {
        std::fprintf(stderr, "scale-stencil-trace: %s: not the stencil's trace: %s\n", template_path.c_str(),
                     scaler.error.c_str());
        return 1;
    }
    trace.header.ranks = static_cast<int32_t>(ranks);
    trace.header.command_line += " (traced at " + std::to_string(from.ranks()) + " ranks, scaled to " +
                                 std::to_string(ranks) + " by scale-stencil-trace)";
    if (const std::string error = write_trace_file(argv[3], trace); !error.empty()) {
        std::fprintf(stderr, "scale-stencil-trace: %s: %s\n", argv[3], error.c_str());
        return 1;
    }
    return 0;
}
