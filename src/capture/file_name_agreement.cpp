#include "capture/file_name_agreement.hpp"

#include "trace/file_names.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace htrace::capture {
namespace {

// Tags of the census's messages on the tracer's own communicator, apart from the merge's (71xx).
constexpr int kCensusSizeTag = 7201;
constexpr int kCensusTag = 7202;
constexpr uint64_t kChunk = uint64_t(1) << 30;  // MPI counts are ints

void send_bytes(const std::vector<uint8_t>& bytes, int to, MPI_Comm comm)
{
    uint64_t size = bytes.size();
    PMPI_Send(&size, 1, MPI_UINT64_T, to, kCensusSizeTag, comm);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        PMPI_Send(bytes.data() + offset, n, MPI_BYTE, to, kCensusTag, comm);
    }
}

std::vector<uint8_t> receive_bytes(int from, MPI_Comm comm)
{
    uint64_t size = 0;
    PMPI_Recv(&size, 1, MPI_UINT64_T, from, kCensusSizeTag, comm, MPI_STATUS_IGNORE);
    std::vector<uint8_t> bytes(size);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        PMPI_Recv(bytes.data() + offset, n, MPI_BYTE, from, kCensusTag, comm, MPI_STATUS_IGNORE);
    }
    return bytes;
}

void broadcast_bytes(std::vector<uint8_t>& bytes, MPI_Comm comm)
{
    uint64_t size = bytes.size();
    PMPI_Bcast(&size, 1, MPI_UINT64_T, 0, comm);
    bytes.resize(size);
    for (uint64_t offset = 0; offset < size; offset += kChunk) {
        const auto n = static_cast<int>(std::min(kChunk, size - offset));
        PMPI_Bcast(bytes.data() + offset, n, MPI_BYTE, 0, comm);
    }
}

// The census of every rank's names at rank 0 of `comm` (elsewhere: of its subtree), over the same
// binomial tree as the merge: ranks with bit k set hand theirs to rank - 2^k in round k.
FileNameCensus census_over_tree(FileNameCensus census, MPI_Comm comm)
{
    int rank = 0;
    int size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    for (int step = 1; step < size; step <<= 1) {
        if (rank & step) {
            send_bytes(census.encode(), rank - step, comm);
            break;
        }
        if (rank + step < size) {
            const auto theirs = FileNameCensus::decode(receive_bytes(rank + step, comm));
            // Our own bytes over our own communicator: damage is a bug. Say so and go on (the
            // application must finish); the header then lacks that subtree's names.
            if (theirs) {
                census.merge(*theirs);
            } else {
                std::fprintf(stderr, "h-trace: file names of rank %d unreadable\n", rank + step);
            }
        }
    }
    return census;
}

}  // namespace

AgreedFileNames agree_on_file_names(const std::map<int64_t, std::string>& mine, int rank, MPI_Comm comm)
{
    FileNameCensus census;
    for (const auto& [key, stored] : mine) census.add(stored, rank);
    census = census_over_tree(std::move(census), comm);

    int comm_rank = 0;
    PMPI_Comm_rank(comm, &comm_rank);
    std::vector<uint8_t> confirmed;
    if (comm_rank == 0) confirmed = census.decide().encode();
    broadcast_bytes(confirmed, comm);
    const FileNameDecision decision = FileNameDecision::decode(confirmed).value_or(FileNameDecision{});

    AgreedFileNames out;
    out.renamed = renamed_file_name_keys(mine, rank, decision);
    if (comm_rank == 0) out.job_names = census.decided_names(decision);
    return out;
}

}  // namespace htrace::capture
