#include "merge/radix_reduce.hpp"

#include "merge/rank_merge.hpp"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <cstdint>
#include <ctime>
#include <vector>

namespace htrace {
namespace {

constexpr ByteTags kTraceTags{7101, 7102};
constexpr uint64_t kChunk = uint64_t(1) << 30;  // MPI counts are ints

}  // namespace

void wait_politely(MPI_Request& request)
{
#ifdef HTRACE_SIMULATED
    // A simulated rank that waits takes no core: SimGrid runs the others meanwhile. Polling would
    // sleep for real and cost simulated time besides (SMPI charges every MPI_Test).
    PMPI_Wait(&request, MPI_STATUS_IGNORE);
#else
    constexpr timespec kPause{0, 50'000};  // 50 us: little next to a merge, nothing next to a core
    int done = 0;
    PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
    while (!done) {
        nanosleep(&kPause, nullptr);
        PMPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
#endif
}

void broadcast_politely(void* buffer, int count, MPI_Datatype type, MPI_Comm comm)
{
#ifdef HTRACE_SIMULATED
    // SMPI's non-blocking broadcast sends from the root to every rank in turn, so the last rank has
    // it after a time that grows with the rank count; its blocking one is a tree.
    PMPI_Bcast(buffer, count, type, 0, comm);
#else
    MPI_Request request = MPI_REQUEST_NULL;
    PMPI_Ibcast(buffer, count, type, 0, comm, &request);
    wait_politely(request);
#endif
}

void send_bytes(const std::vector<uint8_t>& bytes, int to, MPI_Comm comm, ByteTags tags)
{
    uint64_t size = bytes.size();
    // The receiver may still be merging: a large send waits for it, politely.
    MPI_Request request = MPI_REQUEST_NULL;
    PMPI_Isend(&size, 1, MPI_UINT64_T, to, tags.size, comm, &request);
    wait_politely(request);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        PMPI_Isend(bytes.data() + offset, n, MPI_BYTE, to, tags.payload, comm, &request);
        wait_politely(request);
    }
}

std::vector<uint8_t> receive_bytes(int from, MPI_Comm comm, ByteTags tags)
{
    uint64_t size = 0;
    // The sender is still merging its own children's traces: wait without taking a core from it.
    MPI_Request request = MPI_REQUEST_NULL;
    PMPI_Irecv(&size, 1, MPI_UINT64_T, from, tags.size, comm, &request);
    wait_politely(request);
    std::vector<uint8_t> bytes(size);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        PMPI_Recv(bytes.data() + offset, n, MPI_BYTE, from, tags.payload, comm, MPI_STATUS_IGNORE);
    }
    return bytes;
}

void broadcast_bytes(std::vector<uint8_t>& bytes, MPI_Comm comm)
{
    uint64_t size = bytes.size();
    broadcast_politely(&size, 1, MPI_UINT64_T, comm);
    bytes.resize(size);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        broadcast_politely(bytes.data() + offset, n, MPI_BYTE, comm);
    }
}

ReduceResult reduce_over_tree(Sequence mine, MPI_Comm comm, const MergeRule& rule, bool job_cancels)
{
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    ReduceResult result;
    // Round k: ranks with bit k set hand their trace to rank - 2^k and are done. Children always
    // hold higher ranks than their parent, so the parent's events stay first where order is free.
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            send_bytes(encode_sequence(mine), rank - step, comm, kTraceTags);
            return result;
        }
        if (rank + step < size) {
            auto decoded = decode_sequence(receive_bytes(rank + step, comm, kTraceTags));
            if (!decoded.sequence) {
                if (result.error.empty()) result.error = "trace of rank " + std::to_string(rank + step) + ": " + decoded.error;
                continue;
            }
            mine = merge_ranks(std::move(mine), std::move(*decoded.sequence), rule, job_cancels);
        }
    }
    result.merged = std::move(mine);
    return result;
}

}  // namespace htrace
