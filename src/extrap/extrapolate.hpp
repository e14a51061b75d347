#pragma once
// The trace of a rank count nobody ran, from traces of the same program and input at a few smaller
// counts (h-extrap).
//
// The inputs must have the same events in the same order. Their ranks are read as places on a
// process grid (extrap/grid.hpp: the Cartesian grid the program made, else the grid MPI_Dims_create
// would make in one, two or three dimensions, the fewest that name every set of ranks): each set of
// ranks, and each value that differs between ranks, is a function of the ranks' places. A peer is
// where it lies on the grid from the rank (the next rank in a row, the rank above), so that it keeps
// its meaning at another size. Each value that changes with the rank count is fitted to a model of
// it (extrap/model.hpp) and evaluated at the target. What the rules cannot carry (an event at some
// counts only, ranks or values that follow no place on the grid, a categorical value that changes)
// stops the extrapolation with one line that names the event.

#include "trace/event.hpp"

#include <optional>
#include <string>
#include <vector>

namespace htrace {

struct ExtrapolationResult {
    std::optional<Trace> trace;
    std::string error;  // set where trace is empty: "event 12 (MPI_Isend): ..."
};

// `inputs` at three or more rank counts, any order; `names` their files, for the header's record.
ExtrapolationResult extrapolate(const std::vector<Trace>& inputs, const std::vector<std::string>& names,
                                int64_t target_ranks);

}  // namespace htrace
