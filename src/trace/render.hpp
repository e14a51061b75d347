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

std::string render_value(const Value& value, Role role);

}  // namespace htrace
