#pragma once
// How much a neighbourhood v-collective (Neighbor_allgatherv, _alltoallv, _alltoallw) moves between
// each pair of neighbours, where the trace keeps only each member's totals: what it sent over all its
// destinations and received over all its sources. Every member computes the same plan from every
// member's totals and topology, so what one sends a neighbour is what that neighbour receives.

#include "trace/topology.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace htrace::replay {

// One member's per-slot counts, in the order of its neighbours (trace/topology.hpp).
struct SlotCounts {
    std::vector<int64_t> send;
    std::vector<int64_t> receive;
};

// A plan in which every member sends and receives exactly its recorded totals (`sent`, `received`,
// by rank in the communicator), where one exists: a flow over the neighbour graph, bytes counted
// for neighbours that are MPI_PROC_NULL (a grid's edge) going nowhere and coming from nowhere, as
// MPI lets them. `topologies` has each member's. Nullopt where no plan meets the totals.
std::optional<SlotCounts> exact_exchange(const std::vector<const Topology*>& topologies,
                                         const std::vector<int64_t>& sent, const std::vector<int64_t>& received,
                                         int64_t member);

}  // namespace htrace::replay
