#pragma once
// The job's decision on file names at MPI_Finalize, before the ranks' traces merge (the merge
// compares file_name keys): which patterns stand because at least two ranks derived them, and what
// each rank's events must name instead where its own pattern does not (trace/file_names.hpp).

#include <mpi.h>

#include <cstdint>
#include <map>
#include <string>

namespace htrace::capture {

struct AgreedFileNames {
    // This rank's keys whose name changes, old key to new (trace/file_names.hpp, rename_file_names).
    std::map<int64_t, int64_t> renamed;
    // At rank 0 of the communicator, every name the job's events name after the renaming, by key:
    // the header's file names. Elsewhere empty.
    std::map<int64_t, std::string> job_names;
};

// `mine`: the names this rank stored, by key; `rank`: the rank its patterns were derived for (the
// world rank, which is its rank in `comm`). Collective over `comm`, the tracer's own communicator:
// the ranks' censuses merge up a binomial tree (each message holds distinct names once, whatever the
// rank count), rank 0 decides and broadcasts the patterns that stand.
AgreedFileNames agree_on_file_names(const std::map<int64_t, std::string>& mine, int rank, MPI_Comm comm);

}  // namespace htrace::capture
