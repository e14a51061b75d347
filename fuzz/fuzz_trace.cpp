// libFuzzer harnesses over the trace reader and each consumer of what it reads (issue 26): the bytes
// are a trace file; what the reader accepts goes to one consumer, chosen when the harness is built
// (HTRACE_FUZZ_CONSUMER, one executable each, so that each has its own corpus and coverage).
// A crash, a sanitizer report, a hang (libFuzzer's -timeout) or memory beyond -rss_limit_mb is a
// bug: the reader must refuse what a consumer cannot take.
//
// The harness writes the size field and the checksum of each input as they should be before reading
// it, as a damaged file made to pass the integrity check would have them: otherwise nearly every
// mutation would stop there (tests/trace covers those checks).
#include "replay/expected_timeline.hpp"
#include "replay/schedule.hpp"
#include "timeline/chrome_trace.hpp"
#include "trace/render.hpp"
#include "trace/trace_check.hpp"
#include "trace/trace_file.hpp"

#include <boost/crc.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <streambuf>
#include <vector>

namespace {

using namespace htrace;

enum class Consumer { read, text, json, calls, sequence, matrix, schedule };
constexpr Consumer kConsumer = static_cast<Consumer>(HTRACE_FUZZ_CONSUMER);

// What one input may ask of a walk here. The reader takes walks of up to limits::kMostWalkSteps
// (hours of work, as a real trace of a long run may ask) and a table per rank of up to
// limits::kMostRanks ranks; an input that asks for more than a second of it is not a bug, so the
// walking consumers skip it.
constexpr uint64_t kMostFuzzedWalkSteps = uint64_t{1} << 17;
constexpr int32_t kMostFuzzedRanks = 1024;
// Paired schedules look ahead for each receive no message was found for (up to 2^20 items): their
// cost grows with the square of the calls where receives outnumber sends, as damaged loop counts
// make them (0.1 s natively for 4,500 calls, 2.6 s under the sanitizers; bench/RESULTS.md), so
// the schedule harness takes smaller walks.
constexpr uint64_t kMostFuzzedScheduleSteps = uint64_t{1} << 14;
constexpr int32_t kMostFuzzedTimelineRanks = 16;

// Keeps the optimizer from dropping what a consumer made.
volatile size_t sink_size = 0;

// An output stream that only counts what the views write (they write as they go).
class CountingBuffer : public std::streambuf {
public:
    size_t written = 0;

protected:
    int_type overflow(int_type c) override
    {
        if (!traits_type::eq_int_type(c, traits_type::eof())) ++written;
        return traits_type::not_eof(c);
    }
    std::streamsize xsputn(const char*, std::streamsize n) override
    {
        written += static_cast<size_t>(n);
        return n;
    }
};

void consume(const Trace& trace)
{
    CountingBuffer counted;
    std::ostream out(&counted);
    if (kConsumer == Consumer::text) render_text(out, trace);
    if (kConsumer == Consumer::json) render_json(out, trace);
    sink_size = counted.written;
    if (kConsumer == Consumer::read || kConsumer == Consumer::text || kConsumer == Consumer::json) return;
    if (walk_steps(trace.body) > kMostFuzzedWalkSteps || trace.header.ranks > kMostFuzzedRanks) return;
    switch (kConsumer) {
    case Consumer::calls:  // and the profile, which walks the trace as the counts do
        render_call_counts(out, trace);
        render_call_counts_json(out, trace);
        render_profile(out, trace, 20);
        render_profile_json(out, trace);
        sink_size = counted.written;
        break;
    case Consumer::sequence:
        render_sequence(out, trace);
        sink_size = counted.written;
        break;
    case Consumer::matrix:
        render_matrix(out, trace);
        render_matrix_json(out, trace);
        sink_size = counted.written;
        break;
    case Consumer::schedule: {
        if (walk_steps(trace.body) > kMostFuzzedScheduleSteps) break;
        // The first and last rank, in the mode h-replay would choose, and paired mode.
        for (const Rank rank : {Rank{0}, trace.header.ranks - 1}) {
            const bool causal = replay::causal_replay_obstacle(trace, trace.header.seed, rank).empty();
            size_t calls = 0;
            const auto count = [&](const replay::ScheduledCall&) { ++calls; };
            for (const auto mode : {causal ? replay::ReplayMode::causal : replay::ReplayMode::paired,
                                    replay::ReplayMode::paired}) {
                replay::generate_schedule(trace, trace.header.seed, rank, count, {mode, true});
            }
            sink_size = calls;
        }
        // The timeline h-dump --chrome-trace lays out: every rank's schedule, so on few ranks only.
        if (trace.header.ranks <= kMostFuzzedTimelineRanks) {
            timeline::ChromeTraceWriter writer(out, trace.header.command_line);
            replay::write_expected_timeline(trace, kMostFuzzedWalkSteps, writer);
            sink_size += counted.written;
        }
        break;
    }
    default: break;
    }
}

}  // namespace

// The magic, the size field (8 bytes, little-endian) and the checksum (CRC-32 of what comes before it,
// little-endian, last).
constexpr size_t kSizeField = 8;
constexpr size_t kShortest = 8 + 8 + 4;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    std::vector<uint8_t> bytes(data, data + size);
    if (size >= kShortest) {
        for (size_t i = 0; i < 8; ++i) bytes[kSizeField + i] = static_cast<uint8_t>(uint64_t{size} >> (8 * i));
        boost::crc_32_type crc;
        crc.process_bytes(bytes.data(), size - 4);
        for (size_t i = 0; i < 4; ++i) bytes[size - 4 + i] = static_cast<uint8_t>(crc.checksum() >> (8 * i));
    }
    const DecodeResult read = decode_trace(bytes);
    // One line, naming a problem: never empty, never several lines.
    if (!read.trace && (read.error.empty() || read.error.find('\n') != std::string::npos)) __builtin_trap();
    if (read.trace) consume(*read.trace);
    return 0;
}
