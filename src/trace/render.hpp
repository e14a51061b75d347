#pragma once
// The trace as readable, diffable text (h-dump), and as JSON (h-dump --json).

#include "trace/event.hpp"

#include <map>
#include <string>
#include <utility>

namespace htrace {

std::string render_text(const Trace& trace);
std::string render_json(const Trace& trace);

// Per MPI function, how many calls the trace stands for: all ranks, loops expanded.
std::string render_call_counts(const Trace& trace);
// The same per rank with bytes, peers (world ranks) and matched sources, as JSON.
std::string render_call_counts_json(const Trace& trace);

// Each rank's calls in the order it made them, one per line: "3 send MPI_Isend peer=4 tag=1
// bytes=800 comm=0-3", with peers and roots as world ranks and communicators as their members, so
// two traces of the same communication print the same lines whatever their communicator ids.
std::string render_sequence(const Trace& trace);

// Point-to-point traffic between world ranks over the whole job, loops expanded: what each rank
// sent to each other rank by sends, the send side of MPI_Sendrecv(_replace) and started persistent
// sends. Collectives are not pairwise and are left out. A value that is a histogram counts by its
// expected value: sizes by their mean, peers spread over their bins, as h-dump --calls counts them.
struct Traffic {
    double messages = 0;
    double bytes = 0;
};
struct CommunicationMatrix {
    int32_t ranks = 0;
    std::map<std::pair<Rank, Rank>, Traffic> pairs;  // (sender, receiver): only pairs that communicated
    Traffic unresolved;  // sends to a peer the trace cannot name (a communicator it never saw made)
};
CommunicationMatrix communication_matrix(const Trace& trace);
// One line per pair, "sender receiver messages bytes", then the totals.
std::string render_matrix(const Trace& trace);
// The same as JSON: {"ranks", "pairs": [{"from", "to", "messages", "bytes"}], "total", "unresolved"}.
std::string render_matrix_json(const Trace& trace);

std::string render_value(const Value& value, Role role);
// A call-site signature in hex as h-dump shows it ("89abcdef"), also for messages that name a
// trace event.
std::string render_signature(uint64_t signature);

}  // namespace htrace
