#pragma once
// The inter-node merge at MPI_Finalize: ranks pair up over a binomial (radix-2) tree on the
// tracer's own communicator; each parent merges its child's trace into its own.

#include "merge/precision.hpp"
#include "trace/event.hpp"

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace htrace {

struct ReduceResult {
    std::optional<Sequence> merged;  // at rank 0 of `comm` only
    std::string error;               // a child's trace could not be decoded
};

// `comm` must be the tracer's own communicator (every rank of the job, nobody else's messages).
// `job_cancels`: whether any rank of the job cancels requests (cancels_requests), which decides
// what the merge may give to every rank (p = 0).
ReduceResult reduce_over_tree(Sequence mine, MPI_Comm comm, const MergeRule& rule, bool job_cancels);

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
// Waits for `request` sleeping between tests: ranks waiting at MPI_Finalize for others' merges
// (MPI libraries spin in blocking calls) leave the cores to the ranks that merge, where ranks
// outnumber cores.
void wait_politely(MPI_Request& request, MPI_Status* status = MPI_STATUS_IGNORE);
// Rank 0's `count` items of `type` to every rank of `comm`, waiting as politely.
void broadcast_politely(void* buffer, int count, MPI_Datatype type, MPI_Comm comm);
// Rank 0's bytes to every rank of `comm`: one broadcast where they fit in kFirstBroadcastBytes (with
// their size), so that the last ranks, the merge tree's leaves, are not kept waiting for a second.
void broadcast_bytes(std::vector<uint8_t>& bytes, MPI_Comm comm);

}  // namespace htrace
