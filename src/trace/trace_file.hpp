#pragma once
// The format is specified in docs/trace-format.md: a change to what is written or read here
// updates it (and bumps kTraceFormatVersion where the bytes change).
// The trace file: magic, total size, format version, then header and body (compressed, from format
// 11, where that is smaller), CRC-32. Integers are variable-length (LEB128, zigzag for signed
// values) because the file's size is a headline number.

#include "trace/event.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace htrace {

// 2 added the completed_set and cancelled_set parameters of completion calls. 3 stores compute times
// to the nanosecond, each call site's signature once, and steps in per-rank values (values that follow
// the rank); it models persistent requests, matched probes and receives, MPI_Request_free, MPI_Cancel,
// Comm_idup, Intercomm_create (remote_leader), Comm_disconnect and one-sided communication, which
// changes the operation codes: older files do not read.
// 4: MPI-IO, file names; 5: POSIX I/O; 6: strided views; 7: seen values as runs; 8: compute times of
// ranks that differ; 9: histogram bins' moments as integers where they are; 10: histograms take
// their config from the header, bins as gaps and counts, seen values as bitmaps of wide bins; 11:
// everything after the version compressed with zstd where that is smaller; 12: a single completed
// position is a small value of its own (trace/completion_set.hpp), older sets are converted when
// read; 13: histograms say whether they are alike on every rank (Value); 14: loops whose last
// iteration leaves out the end of the body (Loop), signatures as 32 bits (6 to 13 still read); 15:
// communicators' topologies in the header; 16: the run's id and rank 0's host, and for a trace
// h-merge made from partial files, the ranks it holds and where each stopped (TraceHeader::stops);
// 17: for a trace h-extrap made, where it came from and its models (TraceHeader::extrapolation); 18:
// the time inside each event's calls (Event::in_call, absent in older files), and the minimum,
// maximum and deviation of both times as logarithmic codes (trace/time_code.hpp); 19: where each rank's
// time went, spread over the ranks (TraceHeader::rank_times); 20: where each call site is in the
// program's code, after the body (Trace::locations); 21: the seconds the tracer spent recording,
// spread over the ranks, after the other rank times (RankTimes::tracer).
inline constexpr uint32_t kTraceFormatVersion = 21;
inline constexpr uint32_t kOldestReadableFormatVersion = 6;

// `compress`: false writes the contents as they are (what the encoding alone costs).
// The zstd level a trace's payload is compressed at: the strongest whose expected time fits a
// budget that grows with the traced run (header.traced_seconds), so that short runs are not slowed by
// their trace's compression and long ones get the smallest file.
int compression_level(size_t payload_bytes, double traced_seconds);
std::vector<uint8_t> encode_trace(const Trace& trace, bool compress = true);

// How many bytes the file spends on one value.
size_t encoded_size(const Value& value);

// A sequence alone (what ranks send each other during the merge).
std::vector<uint8_t> encode_sequence(const Sequence& sequence);

struct DecodeResult {
    std::optional<Trace> trace;
    std::string error;  // set when trace is empty: "truncated at byte 1234 (expected 2048)"
};
DecodeResult decode_trace(const std::vector<uint8_t>& bytes);

struct SequenceDecodeResult {
    std::optional<Sequence> sequence;
    std::string error;
};
SequenceDecodeResult decode_sequence(const std::vector<uint8_t>& bytes);

// Reads and decodes a file; errors name the problem, not the file (the caller adds it).
DecodeResult read_trace_file(const std::string& path);
// Writes PATH.tmp.PID, syncs it and renames it to `path`: on failure `path` is as it was and the
// temporary file is gone. Returns an error message, empty on success.
std::string write_trace_file(const std::string& path, const Trace& trace);

}  // namespace htrace
