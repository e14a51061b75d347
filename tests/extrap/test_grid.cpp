#include "extrap/grid.hpp"

#include <doctest/doctest.h>

using namespace htrace;

TEST_CASE("balanced grids are those MPI_Dims_create makes")
{
    CHECK(balanced_dims(4, 2) == std::vector<int64_t>{2, 2});
    CHECK(balanced_dims(8, 2) == std::vector<int64_t>{4, 2});
    CHECK(balanced_dims(24, 2) == std::vector<int64_t>{6, 4});
    CHECK(balanced_dims(12, 3) == std::vector<int64_t>{3, 2, 2});
    CHECK(balanced_dims(64, 3) == std::vector<int64_t>{4, 4, 4});
    CHECK(balanced_dims(7, 2) == std::vector<int64_t>{7, 1});
    CHECK(balanced_dims(1, 2) == std::vector<int64_t>{1, 1});
}

TEST_CASE("coordinates are row-major, the last dimension fastest")
{
    const std::vector<int64_t> dims{4, 2};
    CHECK(coordinates_of(dims, 5) == std::vector<int64_t>{2, 1});
    CHECK(rank_at(dims, {2, 1}) == 5);
}

TEST_CASE("the first row of a grid is named the same at every size")
{
    const auto first_row = [](const std::vector<int64_t>& dims) {
        std::vector<Rank> ranks;
        for (Rank r = 0; r < dims[1]; ++r) ranks.push_back(r);
        return ranks;
    };
    const auto at16 = describe_ranks({4, 4}, first_row({4, 4}));
    REQUIRE(at16);
    const std::vector<int64_t> big{8, 8};
    CHECK(ranks_of_classes(big, *at16) == first_row(big));
}

TEST_CASE("a set that holds some ranks of a class only is not described")
{
    CHECK_FALSE(describe_ranks({4, 4}, {1}));       // one of the first row's two middle ranks
    CHECK(describe_ranks({4, 4}, {1, 2}));          // both of them
    CHECK(describe_ranks({4, 4}, {1, 2, 3}));       // the first row's middle and last
    CHECK_FALSE(describe_ranks({16}, {0, 1, 2, 3}));  // in a row of ranks, 1-3 are some of the middle
}

TEST_CASE("a grid's classes are those its ranks have")
{
    CHECK(classes_of_grid({2, 2}).size() == 4);
    CHECK(classes_of_grid({4, 4}).size() == 9);
    CHECK(classes_of_grid({4, 1}).size() == 3);
    std::set<RankClass> seen;
    for (int64_t r = 0; r < 12; ++r) seen.insert(class_of({4, 3}, r));
    CHECK(seen == classes_of_grid({4, 3}));
}
