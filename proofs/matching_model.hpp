#pragma once
// A model of MPI matching that runs every rank's replay schedule side by side and says whether the
// job finishes. It is independent of the replayer: it only reads the calls h-replay would issue.
//
// Its semantics are the strictest MPI allows: every send, blocking or not, is a rendezvous that
// is matched only by a posted receive (no eager buffering), so a schedule that finishes here also
// finishes on any MPI library, which can only buffer more. Matching is non-overtaking: per (source,
// destination, communicator, tag) the k-th send meets the k-th receive.

#include "replay/schedule.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace htrace::proofs {

using Schedule = std::vector<replay::ScheduledCall>;

enum class Failure : uint8_t {
    none,
    deadlock,  // unfinished ranks, none of which can advance
    mismatch,  // calls that do not fit together (sizes, roots, operations, ids, requests)
    leftover,  // all finished, but sends, receives or requests were left unmatched or pending
};

struct ModelReport {
    bool ok = true;
    Failure failure = Failure::none;
    std::string problem;  // what went wrong, readable, naming ranks and calls
    uint64_t calls = 0;   // calls the ranks got through
};

// Runs `schedules[r]` as world rank r's calls. World is communicator id 0 on every rank, self id 1;
// other ids come from the ranks' own create_comm calls, each a collective over the new members
// alone (h-replay makes communicators with MPI_Comm_create_group). Collectives block until every
// member reaches its k-th collective on the communicator; MPI_Comm_free is local.
ModelReport run_matching_model(const std::vector<Schedule>& schedules);

// One line for a call, as failure messages show it.
std::string describe_call(const replay::ScheduledCall& call);

}  // namespace htrace::proofs
