#pragma once
// The trace as readable, diffable text (h-dump), and as JSON (h-dump --json).

#include "trace/event.hpp"

#include <string>

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

std::string render_value(const Value& value, Role role);

}  // namespace htrace
