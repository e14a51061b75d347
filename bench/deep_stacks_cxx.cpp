// The C++ part of the deep-stacks benchmark (deep_stacks.c): the call paths go through templates,
// one function per level of the climb and per leaf, as template-heavy codes have them.
#include "deep_stacks.h"

#include <array>
#include <utility>

namespace {

template <int Kind>
__attribute__((noinline)) int leaf()
{
    if constexpr (Kind < 5) {
        MPI_Sendrecv(deep_stacks.send, 1, MPI_DOUBLE, deep_stacks.right, 0, deep_stacks.receive, 1, MPI_DOUBLE,
                     deep_stacks.left, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        deep_stacks.calls += 1;
    } else if constexpr (Kind < 10) {
        MPI_Allreduce(deep_stacks.send, deep_stacks.receive, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        deep_stacks.calls += 1;
    } else if constexpr (Kind < 15) {
        std::array<MPI_Request, 2> requests;
        MPI_Irecv(deep_stacks.receive, 1, MPI_DOUBLE, deep_stacks.left, 1, MPI_COMM_WORLD, &requests[0]);
        MPI_Isend(deep_stacks.send, 1, MPI_DOUBLE, deep_stacks.right, 1, MPI_COMM_WORLD, &requests[1]);
        MPI_Waitall(2, requests.data(), MPI_STATUSES_IGNORE);
        deep_stacks.calls += 3;
    } else {
        MPI_File_write_at(deep_stacks.file, MPI_Offset(deep_stacks.rank) * 8, deep_stacks.send, 1, MPI_DOUBLE,
                          MPI_STATUS_IGNORE);
        deep_stacks.calls += 1;
    }
    deep_stacks_seen = Kind;
    return Kind;
}

template <size_t... K>
constexpr std::array<int (*)(), sizeof...(K)> leaf_table(std::index_sequence<K...>)
{
    return {&leaf<int(K)>...};
}
constexpr auto leaves = leaf_table(std::make_index_sequence<16>());

template <int Fan>
__attribute__((noinline)) int mid(int kind)
{
    const int r = leaves[size_t(kind)]();
    deep_stacks_seen = Fan;
    return r;
}

template <size_t... J>
constexpr std::array<int (*)(int), sizeof...(J)> mid_table(std::index_sequence<J...>)
{
    return {&mid<int(J)>...};
}
constexpr auto mids = mid_table(std::make_index_sequence<16>());

constexpr int kLevels = 64;

template <int Level>
__attribute__((noinline)) int climb(int frames, int path)
{
    if constexpr (Level < kLevels) {
        if (frames > 0) {
            const int r = climb<Level + 1>(frames - 1, path);
            deep_stacks_seen = Level;
            return r;
        }
    }
    return mids[size_t(path / 16 % 16)](path % 16);
}

}  // namespace

// main -> deep_stacks_cxx -> climb<0..> x (depth - 4) -> mid<J> -> leaf<K> -> MPI
extern "C" __attribute__((noinline)) void deep_stacks_cxx(int depth, int first, int paths, int iterations)
{
    for (int i = 0; i < iterations; ++i)
        for (int p = first; p < first + paths; ++p) climb<0>(depth - 4, p);
}
