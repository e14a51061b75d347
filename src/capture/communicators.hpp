#pragma once
// Communicator bookkeeping: every communicator the application uses gets a small id that is the
// same on every rank for the same creation (world 0, self 1, then the lowest free id), so events on
// it merge across ranks and loops of create/free fold; and its size and the caller's rank in it.

#include "trace/topology.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <vector>

namespace htrace::capture {

struct CommInfo {
    int64_t id = 0;
    int size = 1;
    int rank = 0;
    bool inter = false;
    int remote_size = 0;
    int topology_kind = MPI_UNDEFINED;  // MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH; kept where MPI_Topo_test is not
};

// The smallest id from `first` on that `used` does not hold: ids the same on every rank for the same
// sequence of creations and frees (communicators here, windows in the tracer).
int64_t lowest_unused(std::vector<int64_t> used, int64_t first);

class Communicators {
public:
    void start();
    // The communicator's entry; one not seen being created gets an id now.
    const CommInfo& lookup(MPI_Comm comm);
    // A communicator just made: a new entry, whatever an old one with the same handle said (MPI
    // hands out a freed handle again).
    const CommInfo& add(MPI_Comm comm);
    // An id for a communicator whose handle comes later (MPI_Comm_idup), and the handle once known.
    int64_t reserve();
    void bind(int64_t id, MPI_Comm comm);
    // Forgets the communicator; returns its id (or -1).
    int64_t remove(MPI_Comm comm);
    // The world rank of rank 0 of `comm`.
    int leader_world_rank(MPI_Comm comm) const;
    // The world rank of rank 0 of the remote group of intercommunicator `comm`.
    int remote_leader_world_rank(MPI_Comm comm) const;
    // A key of `group`'s members as world ranks: the same on every member, for the same members.
    int64_t group_key(MPI_Group group) const;
    void set_topology_kind(MPI_Comm comm, int kind);
    // What MPI_Topo_test says of `comm`.
    static int topology_kind(MPI_Comm comm);
    // `comm`'s topology of that kind as the caller sees it (its neighbours, for a graph); nullopt for
    // none (MPI_UNDEFINED).
    static std::optional<Topology> topology(MPI_Comm comm, int kind);

private:
    CommInfo describe(MPI_Comm comm, int64_t id) const;
    int64_t lowest_free_id() const;
    void forget_handle(MPI_Comm comm);
    int world_rank_of_first(MPI_Group group) const;

    struct Entry {
        MPI_Comm comm;
        CommInfo info;
    };
    std::vector<Entry> entries_;  // few, most used first: a linear search beats hashing here
    std::vector<int64_t> reserved_;  // ids of communicators whose handle is not known yet
    MPI_Group world_group_ = MPI_GROUP_NULL;
};

}  // namespace htrace::capture
