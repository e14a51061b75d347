#pragma once
// What the ranks must know of each other at MPI_Finalize before their traces merge, gathered in one
// pass up the merge's binomial tree and one broadcast back: the file names (the merge compares
// file_name keys: which patterns stand because at least two ranks derived them, and what each rank's
// events must name instead where its own pattern does not, trace/file_names.hpp), the slowest rank's
// traced time, whether any rank cancels requests; and for rank 0's header and end line, the
// topologies, where the ranks' time went, where the call sites are and the job's call counts. Where ranks outnumber cores each pass over every rank costs
// milliseconds, so these travel together rather than in a collective each.

#include "merge/radix_reduce.hpp"
#include "trace/event.hpp"

#include <mpi.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace htrace::capture {

struct RankSummary {
    std::map<int64_t, std::string> file_names;  // the names this rank stored, by key
    double traced_seconds = 0;
    bool cancels_requests = false;
    std::vector<uint64_t> counts;  // summed over the ranks; the same length on every rank
    std::map<int64_t, std::string> topologies;
    std::optional<RankTimes> rank_times;  // this rank's alone (trace/rank_times.hpp)
    std::map<uint64_t, SiteLocation> locations;  // of the call sites this rank unwound
};

struct AgreedFileNames {
    // This rank's keys whose name changes, old key to new (trace/file_names.hpp, rename_file_names).
    std::map<int64_t, int64_t> renamed;
    // At rank 0 of the communicator, every name the job's events name after the renaming, by key:
    // the header's file names. Elsewhere empty.
    std::map<int64_t, std::string> job_names;
};

struct JobSummary {
    AgreedFileNames file_names;
    double slowest_seconds = 0;    // the largest traced time of any rank, on every rank
    bool cancels_requests = false;  // whether any rank does, on every rank
    std::vector<uint64_t> counts;   // at rank 0: each count summed over the ranks; elsewhere empty
    std::map<int64_t, std::string> topologies;  // at rank 0: every rank's; elsewhere empty
    std::optional<RankTimes> rank_times;         // at rank 0: over every rank; elsewhere empty
    std::map<uint64_t, SiteLocation> locations;  // at rank 0: every rank's; elsewhere empty
};

// `rank`: the rank the file-name patterns were derived for (the world rank, which is its rank in
// `tree.all`). Up the merge's tree and back by a broadcast over `tree.all`, the tracer's own
// communicator; waits politely (merge/radix_reduce.hpp).
JobSummary summarize_job(const RankSummary& mine, int rank, const MergeTree& tree);

}  // namespace htrace::capture
