#include "merge/radix_reduce.hpp"

#include "merge/rank_merge.hpp"
#include "trace/trace_file.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <vector>

namespace htrace {
namespace {

constexpr ByteTags kTraceTags{7101, 7102};
constexpr uint64_t kChunk = uint64_t(1) << 30;  // MPI counts are ints
// Every rank broadcasts this many bytes whatever the verdict's size (13 without file names, and the
// size): small, since under SMPI a broadcast of 256 bytes reached the last of 1,024 ranks 113 us
// after rank 0 and one of 32 bytes in 68 us (bench/RESULTS.md, issue 28).
constexpr uint64_t kFirstBroadcastBytes = 32;
constexpr uint64_t kSizeBytes = sizeof(uint64_t);

// The size in front of as many of the bytes as fit in `capacity`: an exchange's first message.
std::vector<uint8_t> first_message(const std::vector<uint8_t>& bytes, uint64_t capacity)
{
    const uint64_t size = bytes.size();
    const uint64_t head = std::min(size, capacity - kSizeBytes);
    std::vector<uint8_t> first(kSizeBytes + head);
    std::memcpy(first.data(), &size, kSizeBytes);
    std::copy_n(bytes.begin(), head, first.begin() + kSizeBytes);
    return first;
}

// `whole` becomes the bytes of a first message of `received` bytes at `first`, sized for all of them
// (empty where the message cannot hold a size). Returns how many of them are there.
uint64_t unpack_first_message(const uint8_t* first, uint64_t received, std::vector<uint8_t>& whole)
{
    whole.clear();
    if (received < kSizeBytes) return 0;
    uint64_t size = 0;
    std::memcpy(&size, first, kSizeBytes);
    const uint64_t have = std::min(size, received - kSizeBytes);
    whole.assign(first + kSizeBytes, first + kSizeBytes + have);
    whole.resize(size);
    return have;
}

}  // namespace

void wait_politely(MPI_Request& request, MPI_Status* status)
{
#ifdef HTRACE_SIMULATED
    // A simulated rank that waits takes no core: SimGrid runs the others meanwhile. Polling would
    // sleep for real and cost simulated time besides (SMPI charges every MPI_Test).
    PMPI_Wait(&request, status);
#else
    constexpr timespec kPause{0, 50'000};  // 50 us: little next to a merge, nothing next to a core
    int done = 0;
    PMPI_Test(&request, &done, status);
    while (!done) {
        nanosleep(&kPause, nullptr);
        PMPI_Test(&request, &done, status);
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
    const std::vector<uint8_t> first = first_message(bytes, kFirstMessageBytes);
    // The receiver may still be merging: a large send waits for it, politely.
    MPI_Request request = MPI_REQUEST_NULL;
    PMPI_Isend(first.data(), static_cast<int>(first.size()), MPI_BYTE, to, tags.first, comm, &request);
    wait_politely(request);
    for (uint64_t offset = first.size() - kSizeBytes; offset < bytes.size(); offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, bytes.size() - offset));
        PMPI_Isend(bytes.data() + offset, n, MPI_BYTE, to, tags.rest, comm, &request);
        wait_politely(request);
    }
}

std::vector<uint8_t> receive_bytes(int from, MPI_Comm comm, ByteTags tags)
{
    // Left uninitialized: a rank waiting for a small trace touches no more memory than its size.
    const std::unique_ptr<uint8_t[]> first(new uint8_t[kFirstMessageBytes]);
    // The sender is still merging its own children's traces: wait without taking a core from it.
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Status status;
    PMPI_Irecv(first.get(), kFirstMessageBytes, MPI_BYTE, from, tags.first, comm, &request);
    wait_politely(request, &status);
    int received = 0;
    PMPI_Get_count(&status, MPI_BYTE, &received);
    std::vector<uint8_t> bytes;
    const uint64_t have = unpack_first_message(first.get(), static_cast<uint64_t>(std::max(received, 0)), bytes);
    for (uint64_t offset = have; offset < bytes.size(); offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, bytes.size() - offset));
        PMPI_Recv(bytes.data() + offset, n, MPI_BYTE, from, tags.rest, comm, MPI_STATUS_IGNORE);
    }
    return bytes;
}

void broadcast_bytes(std::vector<uint8_t>& bytes, MPI_Comm comm)
{
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    // Every rank takes part with the same count; only rank 0's contents count.
    std::vector<uint8_t> first = first_message(bytes, kFirstBroadcastBytes);
    first.resize(kFirstBroadcastBytes);
    broadcast_politely(first.data(), static_cast<int>(kFirstBroadcastBytes), MPI_BYTE, comm);
    std::vector<uint8_t> whole;
    const uint64_t have = unpack_first_message(first.data(), kFirstBroadcastBytes, whole);
    if (rank != 0) bytes = std::move(whole);
    for (uint64_t offset = have; offset < bytes.size(); offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, bytes.size() - offset));
        broadcast_politely(bytes.data() + offset, n, MPI_BYTE, comm);
    }
}

int rank_in(MPI_Comm all, MPI_Comm comm, int rank)
{
    MPI_Group from = MPI_GROUP_NULL;
    MPI_Group to = MPI_GROUP_NULL;
    PMPI_Comm_group(comm, &from);
    PMPI_Comm_group(all, &to);
    int out = rank;
    PMPI_Group_translate_ranks(from, 1, &rank, to, &out);
    PMPI_Group_free(&from);
    PMPI_Group_free(&to);
    return out;
}

MergeTree make_merge_tree(MPI_Comm all)
{
    MergeTree tree;
    tree.all = all;
    int rank = 0;
    PMPI_Comm_rank(all, &rank);
    // Ranks of one host share a colour: a hash of its name (FNV-1a). Two hosts that share a hash
    // merge as one host, which costs time only.
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int length = 0;
    PMPI_Get_processor_name(name, &length);
    uint32_t hash = 2166136261u;
    for (int i = 0; i < length; ++i) hash = (hash ^ static_cast<unsigned char>(name[i])) * 16777619u;
    PMPI_Comm_split(all, static_cast<int>(hash & 0x7fffffff), rank, &tree.host);
    int host_rank = 0;
    PMPI_Comm_rank(tree.host, &host_rank);
    PMPI_Comm_split(all, host_rank == 0 ? 0 : MPI_UNDEFINED, rank, &tree.hosts);
    return tree;
}

void free_merge_tree(MergeTree& tree)
{
    if (tree.host != MPI_COMM_NULL) PMPI_Comm_free(&tree.host);
    if (tree.hosts != MPI_COMM_NULL) PMPI_Comm_free(&tree.hosts);
}

ReduceResult reduce_over_tree(Sequence mine, const MergeTree& tree, const MergeRule& rule, bool job_cancels)
{
    ReduceResult result;
    // Children hold higher ranks than their parent, so the parent's events stay first where order
    // is free.
    const bool root = climb_tree(
        tree, kTraceTags, [&] { return encode_sequence(mine); },
        [&](const std::vector<uint8_t>& bytes, int child) {
            auto decoded = decode_sequence(bytes);
            if (!decoded.sequence) {
                if (result.error.empty()) result.error = "trace of rank " + std::to_string(child) + ": " + decoded.error;
                return;
            }
            mine = merge_ranks(std::move(mine), std::move(*decoded.sequence), rule, job_cancels);
        });
    if (root) result.merged = std::move(mine);
    return result;
}

}  // namespace htrace
