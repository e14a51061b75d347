#pragma once
// Ranks as places on a process grid, so that a set of ranks seen at a few rank counts can be named
// at another: "the first row", "every rank but the grid's edges", "rank 0".
//
// A rank's class is its place in each dimension of the grid: first, middle or last (only, where the
// dimension has one rank). SPMD codes give ranks of one class the same role: a stencil's edge ranks
// send nothing past the edge, its inner ranks send in every direction. A set of ranks is a set of
// classes where it holds every rank of each of its classes; a one-dimensional grid (the ranks in a
// row) names rank 0, the last rank and the ranks between.

#include "trace/rank_list.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <vector>

namespace htrace {

// The grid MPI_Dims_create(ranks, ndims, {0...}) makes: extents as close to each other as
// possible, in non-increasing order.
std::vector<int64_t> balanced_dims(int64_t ranks, int ndims);

// A rank's place in each dimension, two bits per dimension (dims[0] in the lowest). Ranks are
// numbered row-major, the last dimension varying fastest, as MPI_Cart_create numbers them.
using RankClass = uint32_t;
enum class Place : uint8_t { first, middle, last, only };
inline constexpr int kMaxGridDims = 8;

RankClass class_of(const std::vector<int64_t>& dims, int64_t rank);
// The classes of a grid that hold at least one rank.
std::set<RankClass> classes_of_grid(const std::vector<int64_t>& dims);
// The classes of `ranks`, where it holds every rank of each (nullopt otherwise).
std::optional<std::set<RankClass>> describe_ranks(const std::vector<int64_t>& dims, const std::vector<Rank>& ranks);
// The ranks of the grid in `classes`, ascending.
std::vector<Rank> ranks_of_classes(const std::vector<int64_t>& dims, const std::set<RankClass>& classes);

// A rank's coordinates on the grid.
std::vector<int64_t> coordinates_of(const std::vector<int64_t>& dims, int64_t rank);
int64_t rank_at(const std::vector<int64_t>& dims, const std::vector<int64_t>& coordinates);

}  // namespace htrace
