#pragma once
// The inter-node merge at MPI_Finalize: ranks pair up over binomial (radix-2) trees on the tracer's
// own communicator, first the ranks of each host, then one rank of each host; each parent merges its
// child's trace into its own.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace htrace {

// The merge's tree: a binomial tree over the ranks of each host, then one over each host's lowest
// rank. Where ranks go round-robin over hosts, one binomial tree over all ranks had every rank of a
// host send at once in each of its first levels, all through the host's one link (16 ranks a host:
// 16 traces at once). On one host, or with one rank a host, or with ranks in blocks of a power of two
// per host, it is that tree. Children have higher ranks than their parent in both.
struct MergeTree {
    MPI_Comm all = MPI_COMM_NULL;    // the tracer's own communicator
    MPI_Comm host = MPI_COMM_NULL;   // this rank's host's ranks
    MPI_Comm hosts = MPI_COMM_NULL;  // each host's lowest rank; MPI_COMM_NULL on the others
};
// Collective over `all`, the tracer's own communicator (which the tree does not own).
MergeTree make_merge_tree(MPI_Comm all);
void free_merge_tree(MergeTree& tree);

struct ReduceResult {
    std::optional<Sequence> merged;  // at rank 0 of `comm` only
    std::string error;               // a child's trace could not be decoded
};

// `tree` must be over the tracer's own communicator (every rank of the job, nobody else's messages).
// `job_cancels`: whether any rank of the job cancels requests (cancels_requests), which decides
// what the merge may give to every rank (p = 0).
ReduceResult reduce_over_tree(Sequence mine, const MergeTree& tree, const MergeRule& rule, bool job_cancels);

// Bytes between ranks of the tracer's own communicator. The first message carries the size and as
// much of the bytes as fits in kFirstMessageBytes, so that an exchange is one message, one latency,
// where the bytes fit (a trace's merge is a chain of such exchanges, one per level of the tree); the
// rest follows in chunks MPI's int counts can take. Two tags of the caller's keep the exchanges at
// MPI_Finalize apart.
struct ByteTags {
    int first;
    int rest;
};
inline constexpr int kFirstMessageBytes = 64 * 1024;
void send_bytes(const std::vector<uint8_t>& bytes, int to, MPI_Comm comm, ByteTags tags);
// Empty where the first message is too short to hold a size: our own bytes on our own communicator,
// so a bug; the caller's decoder then refuses them.
std::vector<uint8_t> receive_bytes(int from, MPI_Comm comm, ByteTags tags);
// The rank in `all` of rank `rank` of `comm`, a communicator of some of its ranks.
int rank_in(MPI_Comm all, MPI_Comm comm, int rank);
// Waits for `request` sleeping between tests: ranks waiting at MPI_Finalize for others' merges
// (MPI libraries spin in blocking calls) leave the cores to the ranks that merge, where ranks
// outnumber cores.
void wait_politely(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE);
// Up `tree`, each rank's bytes (`give()`) to its parent once it has taken its children's
// (`take(bytes, child)`, `child` the child's rank in `tree.all`). True at the root, rank 0 of `tree.all`.
template <class Give, class Take>
bool climb_tree(const MergeTree& tree, ByteTags tags, Give&& give, Take&& take)
{
    for (MPI_Comm comm : {tree.host, tree.hosts}) {
        if (comm == MPI_COMM_NULL) return false;
        int rank = 0;
        int size = 1;
        PMPI_Comm_rank(comm, &rank);
        PMPI_Comm_size(comm, &size);
        // Round k: ranks with bit k set hand theirs to rank - 2^k and are done.
        for (int step = 1; step < size; step <<= 1) {
            if (rank & step) {
                send_bytes(give(), rank - step, comm, tags);
                return false;
            }
            if (rank + step < size) take(receive_bytes(rank + step, comm, tags), rank_in(tree.all, comm, rank + step));
        }
    }
    return true;
}

// Rank 0's `count` items of `type` to every rank of `comm`, waiting as politely.
void broadcast_politely(void* buffer, int count, MPI_Datatype type, MPI_Comm comm);
// Rank 0's bytes to every rank of `comm`: one broadcast where they fit in kFirstBroadcastBytes (with
// their size), so that the last ranks, the merge tree's leaves, are not kept waiting for a second.
void broadcast_bytes(std::vector<uint8_t>& bytes, MPI_Comm comm);

}  // namespace htrace
