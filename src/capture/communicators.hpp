#pragma once
// Communicator bookkeeping: every communicator the application uses gets a small id that is the
// same on every rank for the same creation (world 0, self 1, then the lowest free id), so events on
// it merge across ranks and loops of create/free fold; and its size and the caller's rank in it.

#include <mpi.h>

#include <cstdint>
#include <vector>

namespace htrace::capture {

struct CommInfo {
    int64_t id = 0;
    int size = 1;
    int rank = 0;
    bool inter = false;
    int remote_size = 0;
};

class Communicators {
public:
    void start();
    // The communicator's entry; one not seen being created gets an id now.
    const CommInfo& lookup(MPI_Comm comm);
    const CommInfo& add(MPI_Comm comm);
    // Forgets the communicator; returns its id (or -1).
    int64_t remove(MPI_Comm comm);
    // The world rank of rank 0 of `comm`.
    int leader_world_rank(MPI_Comm comm) const;

private:
    CommInfo describe(MPI_Comm comm, int64_t id) const;
    int64_t lowest_free_id() const;

    struct Entry {
        MPI_Comm comm;
        CommInfo info;
    };
    std::vector<Entry> entries_;  // few, most used first: a linear search beats hashing here
    MPI_Group world_group_ = MPI_GROUP_NULL;
};

}  // namespace htrace::capture
