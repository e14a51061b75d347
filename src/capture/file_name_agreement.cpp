#include "capture/file_name_agreement.hpp"

#include "merge/radix_reduce.hpp"
#include "trace/file_names.hpp"

#include <cstdio>
#include <vector>

namespace htrace::capture {
namespace {

// The census's messages on the tracer's own communicator, apart from the merge's (71xx).
constexpr ByteTags kCensusTags{7201, 7202};

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
            send_bytes(census.encode(), rank - step, comm, kCensusTags);
            break;
        }
        if (rank + step < size) {
            const auto theirs = FileNameCensus::decode(receive_bytes(rank + step, comm, kCensusTags));
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
