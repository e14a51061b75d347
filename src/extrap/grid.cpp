#include "extrap/grid.hpp"

#include <algorithm>

namespace htrace {

std::vector<int64_t> balanced_dims(int64_t ranks, int ndims)
{
    // The prime factors, largest first, each to the dimension with the smallest product so far.
    std::vector<int64_t> factors;
    for (int64_t n = ranks, p = 2; n > 1;) {
        if (p * p > n) {
            factors.push_back(n);
            break;
        }
        if (n % p == 0) {
            factors.push_back(p);
            n /= p;
        } else {
            ++p;
        }
    }
    std::vector<int64_t> dims(static_cast<size_t>(std::max(ndims, 1)), 1);
    std::sort(factors.rbegin(), factors.rend());
    for (int64_t f : factors) *std::min_element(dims.begin(), dims.end()) *= f;
    std::sort(dims.rbegin(), dims.rend());
    return dims;
}

std::vector<int64_t> coordinates_of(const std::vector<int64_t>& dims, int64_t rank)
{
    std::vector<int64_t> coordinates(dims.size());
    for (size_t k = dims.size(); k-- > 0;) {
        coordinates[k] = rank % dims[k];
        rank /= dims[k];
    }
    return coordinates;
}

int64_t rank_at(const std::vector<int64_t>& dims, const std::vector<int64_t>& coordinates)
{
    int64_t rank = 0;
    for (size_t k = 0; k < dims.size(); ++k) rank = rank * dims[k] + coordinates[k];
    return rank;
}

RankClass class_of(const std::vector<int64_t>& dims, int64_t rank)
{
    RankClass c = 0;
    const auto coordinates = coordinates_of(dims, rank);
    for (size_t k = 0; k < dims.size(); ++k) {
        const int64_t x = coordinates[k];
        const Place place = dims[k] == 1 ? Place::only
                            : x == 0       ? Place::first
                            : x == dims[k] - 1 ? Place::last
                                             : Place::middle;
        c |= static_cast<RankClass>(place) << (2 * k);
    }
    return c;
}

namespace {

int64_t grid_size(const std::vector<int64_t>& dims)
{
    int64_t size = 1;
    for (int64_t d : dims) size *= d;
    return size;
}

}  // namespace

std::set<RankClass> classes_of_grid(const std::vector<int64_t>& dims)
{
    // Every combination of the places each dimension has: no need to visit every rank.
    std::set<RankClass> classes{0};
    for (size_t k = 0; k < dims.size(); ++k) {
        std::vector<Place> places;
        if (dims[k] == 1) {
            places = {Place::only};
        } else {
            places = {Place::first, Place::last};
            if (dims[k] > 2) places.push_back(Place::middle);
        }
        std::set<RankClass> next;
        for (RankClass c : classes) {
            for (Place p : places) next.insert(c | static_cast<RankClass>(p) << (2 * k));
        }
        classes = std::move(next);
    }
    return classes;
}

std::optional<std::set<RankClass>> describe_ranks(const std::vector<int64_t>& dims, const std::vector<Rank>& ranks)
{
    std::set<RankClass> classes;
    for (Rank r : ranks) classes.insert(class_of(dims, r));
    // Every rank of those classes must be in the set: count them rather than list them.
    int64_t members = 0;
    const int64_t size = grid_size(dims);
    for (int64_t r = 0; r < size; ++r) members += classes.count(class_of(dims, r));
    if (members != static_cast<int64_t>(ranks.size())) return std::nullopt;
    return classes;
}

std::vector<Rank> ranks_of_classes(const std::vector<int64_t>& dims, const std::set<RankClass>& classes)
{
    std::vector<Rank> ranks;
    const int64_t size = grid_size(dims);
    for (int64_t r = 0; r < size; ++r) {
        if (classes.count(class_of(dims, r))) ranks.push_back(static_cast<Rank>(r));
    }
    return ranks;
}

}  // namespace htrace
