#pragma once
// The trace as readable, diffable text (h-dump), and as JSON (h-dump --json).

#include "trace/event.hpp"
#include "trace/source_lines.hpp"

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace htrace {

// Every view writes to `out` as it goes: what it holds in memory is bounded by the trace (and per-rank
// state), never by the text it writes. JSON strings are always valid UTF-8 (see json_string).
void render_text(std::ostream& out, const Trace& trace);
// The same as one string, for messages that quote a small trace (the proofs).
std::string render_text(const Trace& trace);
void render_json(std::ostream& out, const Trace& trace);

// How many calls a view may visit one by one before it gives up with a message (h-dump --max-calls):
// loops of exact counts cost the counting views nothing (WalkCursor's fold_exact_loops), but
// --sequence prints every call, and a loop that makes communicators is walked iteration by iteration.
constexpr uint64_t kDefaultMaxCalls = 100'000'000;

// A count the trace stands for: a whole number where every loop around the calls has an exact count
// (kept exactly, beyond 2^53 too), plus what loops whose counts are histograms add by their means.
class Amount {
public:
    // `value` `repeats` times, times `weight` (a histogram loop's expected share; 1 outside them).
    void add(int64_t value, uint64_t repeats, double weight);
    // A histogram's mean value, which is never exact.
    void add_mean(double mean, uint64_t repeats, double weight);
    void add(const Amount& other);
    double approximate() const;
    // "12", or "12.50" where a histogram's mean made it fractional.
    std::string to_string() const;

private:
    __extension__ typedef __int128 Whole;
    Whole whole_ = 0;
    double expected_ = 0;
};

// What a view that walks the trace tells its caller: empty, or why it wrote nothing ("the sequence
// has 12 calls, more than --max-calls 10").
using RenderError = std::string;

// Per MPI function, how many calls the trace stands for: all ranks, loops expanded.
RenderError render_call_counts(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);
// The same per rank with bytes, peers (world ranks) and matched sources, as JSON.
RenderError render_call_counts_json(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);

// Each rank's calls in the order it made them, one per line: "3 send MPI_Isend peer=4 tag=1
// bytes=800 comm=0-3", with peers and roots as world ranks and communicators as their members, so
// two traces of the same communication print the same lines whatever their communicator ids. Refuses
// (writing nothing) when there are more than `max_calls` lines to write.
RenderError render_sequence(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);

// Point-to-point traffic between world ranks over the whole job, loops expanded: what each rank
// sent to each other rank by sends, the send side of MPI_Sendrecv(_replace) and started persistent
// sends. Collectives are not pairwise and are left out. A value that is a histogram counts by its
// expected value: sizes by their mean, peers spread over their bins, as h-dump --calls counts them.
struct Traffic {
    Amount messages;
    Amount bytes;
};
struct CommunicationMatrix {
    int32_t ranks = 0;
    std::map<std::pair<Rank, Rank>, Traffic> pairs;  // (sender, receiver): only pairs that communicated
    Traffic unresolved;  // sends to a peer the trace cannot name (a communicator it never saw made)
    RenderError error;   // the walk had more than max_calls calls to visit: the rest is empty
};
CommunicationMatrix communication_matrix(const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);
// One line per pair, "sender receiver messages bytes", then the totals.
RenderError render_matrix(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);
// The same as JSON: {"ranks", "pairs": [{"from", "to", "messages", "bytes"}], "total", "unresolved"}.
RenderError render_matrix_json(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls);

// Refuses, at the trace's cost, a trace whose walk (loops expanded) makes more than `max_calls`
// calls over all ranks or takes more steps; else empty, and with `calling_ranks` which world ranks
// make any call (by rank: 1 or 0) and `walk_steps` the steps of one full walk. For the views that
// visit every call (--sequence, timelines).
RenderError check_call_count(const Trace& trace, uint64_t max_calls, std::vector<char>* calling_ranks = nullptr,
                             uint64_t* walk_steps = nullptr);

// An mpiP-style profile from the trace alone (h-dump --profile): the job's time, where each rank's
// went (least, mean and most over the ranks, with which rank: TraceHeader::rank_times), and the call
// sites by their total time inside calls, most first, with calls, bytes and how many ranks called
// there, and where each site is in the code: its source line where `source_lines` has it
// (resolve_source_lines), its module and address otherwise; text shows the first `top` sites, JSON all.
RenderError render_profile(std::ostream& out, const Trace& trace, size_t top, uint64_t max_calls = kDefaultMaxCalls,
                           const SourceLines& source_lines = {});
RenderError render_profile_json(std::ostream& out, const Trace& trace, uint64_t max_calls = kDefaultMaxCalls,
                                const SourceLines& source_lines = {});

// `s` as a JSON string: quotes, backslashes and control characters escaped, and each byte that is not
// part of valid UTF-8 (a file name of any bytes, a damaged header) replaced by U+FFFD.
std::string json_string(std::string_view s);

std::string render_value(const Value& value, Role role);
// A call-site signature in hex as h-dump shows it ("89abcdef"), also for messages that name a
// trace event.
std::string render_signature(uint64_t signature);

}  // namespace htrace
