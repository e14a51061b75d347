#pragma once
// What a trace may hold: every bound the reader checks a trace against, in one place. A trace is
// input from elsewhere (users share traces with tool developers and vendors), so the reader refuses
// anything outside these, with one line naming the field and the event, before a tool walks,
// prints or replays it. Each bound is far beyond what a traced run makes; the tracer keeps within
// them where a program could exceed one (names are made valid UTF-8 and cut to length when
// recorded, a trace that would compress beyond kMostCompressionRatio is stored plain).

#include <cstdint>

namespace htrace::limits {

// Ranks of a job (MPI_COMM_WORLD's size): 16 M.
inline constexpr int64_t kMostRanks = int64_t{1} << 24;

// The histogram configuration (HTRACE_BINS, HTRACE_REBALANCE: capture/config.cpp takes these).
inline constexpr int64_t kMostBins = int64_t{1} << 16;
inline constexpr int64_t kMostRebalanceInterval = int64_t{1} << 30;

// The decompressed contents of a trace file, and how many times larger than its zstd frame they may
// be: a small frame cannot make the reader decompress (and build a trace from) gigabytes.
inline constexpr uint64_t kMostPayloadBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMostCompressionRatio = 1000;
// zstd's window (2^23 = 8 MiB): the writer's levels (19 up to 1 MiB, 9 above) use at most 4 MiB.
inline constexpr int kMostZstdWindowLog = 23;

// Text in the header. A file name (a pattern, trace/file_names.hpp) or an operation's name, in
// bytes; the command line and the MPI library's version string; a topology's description. All
// valid UTF-8.
inline constexpr uint64_t kMostNameBytes = 4096;
inline constexpr uint64_t kMostHeaderTextBytes = uint64_t{1} << 16;
inline constexpr uint64_t kMostTopologyBytes = uint64_t{1} << 24;
// An extrapolated trace's record: a line per value that changes with the rank count.
inline constexpr uint64_t kMostExtrapolationLines = uint64_t{1} << 20;
// The width of a zero-padded rank in a file-name pattern, "{rank:0N}".
inline constexpr int64_t kMostRankWidth = 16;

// Values of parameters. Byte counts of one call (messages, one-sided accesses, view blocks): 1 TiB.
inline constexpr int64_t kMostBytes = int64_t{1} << 40;
// File offsets, sizes and view displacements: 1 PiB, either sign where MPI allows one.
inline constexpr int64_t kMostFileBytes = int64_t{1} << 50;
// Tags: MPI_TAG_UB is at least 32767 and at most INT_MAX; MPI_ANY_TAG is kAnyTag.
inline constexpr int64_t kMostTag = (int64_t{1} << 31) - 1;
// Communicator, window and file ids: the lowest free id, so below the number alive at once.
inline constexpr int64_t kMostId = int64_t{1} << 24;
// Any other value, and a per-rank value's steps: no arithmetic on them overflows.
inline constexpr int64_t kMostValue = int64_t{1} << 62;

// Iterations of one loop, and steps of a whole walk of the trace (every call of every rank, and
// every iteration of every loop, at the largest counts replay could draw): a trace past these
// would take h-dump --calls or a replay days, and is a damaged file.
inline constexpr int64_t kMostLoopIterations = int64_t{1} << 40;
inline constexpr uint64_t kMostWalkSteps = uint64_t{1} << 40;
// Each call an event stands for recorded its compute time, so the events' counts of those are the
// calls of the run: a walk (loop counts at their means) may make kCallsPerRecorded times as many,
// plus kUnrecordedCalls (traces built without times), and no more. A loop count bumped by damage
// makes millions of times more.
inline constexpr double kCallsPerRecorded = 64;
inline constexpr double kUnrecordedCalls = double(1 << 24);

// Times, in seconds: the traced run (MPI_Init to MPI_Finalize) at most 10^7 s (116 days); one
// computation gap at most the traced run, plus kComputeSlack for clocks that disagree.
inline constexpr double kMostTracedSeconds = 1e7;
inline constexpr double kComputeSlack = 1.0;
// The start time, seconds since the epoch: up to the year 2514.
inline constexpr int64_t kMostStartTime = int64_t{1} << 34;

}  // namespace htrace::limits
