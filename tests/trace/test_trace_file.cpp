#include "trace/trace_file.hpp"

#include "support/trace_builders.hpp"
#include "trace/completion_set.hpp"
#include "trace/time_code.hpp"

#include <boost/crc.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include <unistd.h>

using namespace htrace;

namespace {

Trace sample_trace()
{
    Trace t;
    t.header.ranks = 8;
    t.header.precision = 95;
    t.header.histogram = HistogramConfig{16, 32};
    t.header.seed = 0x123456789abcdefull;
    t.header.mpi_library = "Some MPI 1.2";
    t.header.command_line = "./app --size 100";
    t.header.start_time = 1'790'000'000;
    t.header.traced_seconds = 12.5;
    t.header.file_names = {{17, "ckpt_{rank:04}.dat"}, {123456789, "input/mesh.h5"}};
    t.header.run_id = 0xfedcba9876543210ull;
    t.header.host = "node17";
    t.header.stops = {{2, 40, "got SIGTERM"}, {5, 41, "called MPI_Abort (error code 3)"}};

    Event per_rank = test::call('s', 8, 0);
    per_rank.ranks = RankList::from_sorted({0, 1, 2, 3, 4, 5, 6, 7});
    per_rank.params[0].value = Value(std::vector<PerRankValue>{{1, RankList::from_sorted({0, 1, 2, 3})},
                                                              {kProcNull, RankList::from_sorted({4, 5, 6, 7})}});
    // Bytes that follow the rank on 0-5 (a step), and one value on the rest.
    per_rank.params[2].value = Value(std::vector<PerRankValue>{{64, RankList::from_sorted({0, 1, 2, 3, 4, 5}), 8},
                                                              {8, RankList::from_sorted({6, 7})}});
    // Rank 4 computed longer before it than the others.
    per_rank.compute_by_rank.resize(2);
    per_rank.compute_by_rank[0].ranks = RankList::from_sorted({0, 1, 2, 3, 5, 6, 7});
    per_rank.compute_by_rank[1].ranks = RankList(4);
    for (int i = 0; i < 7; ++i) per_rank.compute_by_rank[0].compute.add(1e-6);
    per_rank.compute_by_rank[1].compute.add(25e-6);
    Histogram sizes(t.header.histogram);
    for (int i = 0; i < 200; ++i) sizes.add(80 + (i * 7) % 50, i % 8);
    Event histogram_event = test::call('h', 8, 0);
    histogram_event.ranks = per_rank.ranks;
    histogram_event.params[2].value = Value(sizes);

    Event opaque = test::call('o', 0, 3, operation_by_name("MPI_Some_unmodelled_function"));
    opaque.params.clear();
    opaque.compute = TimeStats{};

    Histogram counts(t.header.histogram);
    for (int i = 0; i < 30; ++i) counts.add(39 + i % 4, i % 8);
    Loop inner{Value(counts, true), {Node{histogram_event}}};  // alike on every rank (format 13)
    t.body.push_back(test::loop(100, {Node{per_rank}, Node{inner}, Node{opaque}}));
    t.body.push_back(Node{test::collective('b', 0, Op::Allreduce)});
    // Steps with a collective between them, the last without it (format 14).
    Loop steps{Value(int64_t{5}), {Node{test::call('e', 8, 0)}, Node{test::collective('c', 0, Op::Barrier)}}};
    steps.last_leaves_out = 1;
    t.body.push_back(Node{steps});
    Event write = test::call('w', 4096, 0, Op::File_write_at_all);
    write.ranks = per_rank.ranks;
    write.params = {{Role::comm, Value(int64_t{0})}, {Role::file, Value(int64_t{0})},
                    {Role::offset, Value(std::vector<PerRankValue>{{0, per_rank.ranks, 4096}})},
                    {Role::bytes, Value(int64_t{4096})}};
    t.body.push_back(Node{write});
    return t;
}

// `h` as a parameter of a one-event trace, written and read back; nullopt if it did not read. A
// completed set takes any value, and the reader takes as many seen values as the trace has ranks.
std::optional<Histogram> histogram_read_back(const Histogram& h)
{
    Trace t;
    t.header.ranks = 1 << 16;
    Event e = test::call('p', 8, 0);
    e.params[0] = {Role::completed_set, Value(h)};
    t.body.push_back(Node{e});
    const DecodeResult read = decode_trace(encode_trace(t));
    if (!read.trace) return std::nullopt;
    CHECK(*read.trace == t);
    return read.trace->body[0].event().params[0].value.histogram();
}

// Bytes of a trace file whose contents were edited, with the total size and the checksum made to
// match them again.
void fix_size_and_checksum(std::vector<uint8_t>& bytes)
{
    for (int i = 0; i < 8; ++i) bytes[8 + i] = static_cast<uint8_t>(bytes.size() >> (8 * i));
    boost::crc_32_type crc;
    crc.process_bytes(bytes.data(), bytes.size() - 4);
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<uint8_t>(crc.checksum() >> (8 * i));
}

// What follows the header of a trace with nothing in its body: the body's count of nodes and of
// opaque names, its count of modules (format 20) and the CRC.
constexpr size_t kEmptyBodyBytes = 2 + 1 + 4;

// An empty body's count of modules (0), which formats before 20 do not have.
void drop_count_of_modules(std::vector<uint8_t>& bytes)
{
    const auto count = bytes.end() - 4 - 1;
    REQUIRE(*count == 0);
    bytes.erase(count);
}

}  // namespace

TEST_CASE("a trace written and read back is equal to the original")
{
    const Trace original = sample_trace();
    const auto bytes = encode_trace(original);
    const DecodeResult read = decode_trace(bytes);
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    CHECK(*read.trace == original);
    CHECK(encode_trace(*read.trace) == bytes);
}

TEST_CASE("a sequence written and read back is equal to the original")
{
    const Sequence original = sample_trace().body;
    const auto read = decode_sequence(encode_sequence(original));
    REQUIRE_MESSAGE(read.sequence.has_value(), read.error);
    CHECK(*read.sequence == original);
}

TEST_CASE("a trace file keeps the mean computation to the nanosecond, its spread within the codes' steps, "
          "and the merge's messages keep them exactly")
{
    Trace t = sample_trace();
    Event timed = test::call('t', 8, 0);
    timed.compute = TimeStats{};
    for (double seconds : {3.14159e-6, 2.5e-3, 7.77777777e-7, 1.0 / 3}) timed.compute.add(seconds);
    t.body.push_back(Node{timed});
    const DecodeResult read = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    const TimeStats& back = read.trace->body.back().event().compute;
    CHECK(back.count == 4);
    CHECK(std::abs(back.mean - timed.compute.mean) <= 0.5e-9);
    CHECK(back.min <= timed.compute.min);
    CHECK(back.min == doctest::Approx(timed.compute.min).epsilon(0.123));
    CHECK(back.max >= timed.compute.max);
    CHECK(back.max == doctest::Approx(timed.compute.max).epsilon(0.123));
    const double deviation = std::sqrt(timed.compute.m2 / 4);
    CHECK(std::sqrt(back.m2 / 4) == doctest::Approx(deviation).epsilon(0.06));

    const auto merged = decode_sequence(encode_sequence(t.body));
    REQUIRE(merged.sequence.has_value());
    CHECK(merged.sequence->back().event().compute == timed.compute);
}

TEST_CASE("a trace file keeps the time in calls within its codes' steps, and the merge's messages exactly")
{
    Trace t = sample_trace();
    Event timed = test::call('t', 8, 0);
    timed.compute = TimeStats{};
    timed.in_call = TimeStats{};
    for (double seconds : {1.5e-7, 2.25e-6, 4e-3, 0.75}) {
        timed.compute.add(1e-6);
        timed.in_call.add(seconds);
    }
    Event once = test::call('o', 8, 0);
    once.in_call.add(12.5e-6);
    Event finalize = test::call('f', 0, 0, Op::Finalize);  // its time in the call is not measured
    t.body.insert(t.body.end(), {Node{timed}, Node{once}, Node{finalize}});
    const DecodeResult read = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    const auto& body = read.trace->body;
    const TimeStats& back = body[body.size() - 3].event().in_call;
    CHECK(back.count == 4);
    CHECK(back.mean == doctest::Approx(timed.in_call.mean).epsilon(0.00035));
    CHECK(back.min == doctest::Approx(timed.in_call.min).epsilon(0.123));
    CHECK(back.max == doctest::Approx(timed.in_call.max).epsilon(0.123));
    CHECK(back.min <= timed.in_call.min);
    CHECK(back.max >= timed.in_call.max);
    CHECK(std::sqrt(back.m2 / 4) == doctest::Approx(std::sqrt(timed.in_call.m2 / 4)).epsilon(0.06));
    CHECK(back.min <= back.mean);
    CHECK(back.mean <= back.max);
    const TimeStats& back_once = body[body.size() - 2].event().in_call;
    CHECK(back_once.count == 1);
    CHECK(back_once.mean == doctest::Approx(12.5e-6).epsilon(0.00035));
    CHECK(body.back().event().in_call.count == 0);
    // The rest of the file is read where it should be: the events before and after are intact.
    CHECK(body.back().event().op == Op::Finalize);
    CHECK(body[body.size() - 3].event().compute.count == 4);

    const auto merged = decode_sequence(encode_sequence(t.body));
    REQUIRE(merged.sequence.has_value());
    CHECK(merged.sequence->at(merged.sequence->size() - 3).event().in_call == timed.in_call);
}

TEST_CASE("a file keeps the time in calls per call site: its events share it, and the site's total is kept")
{
    // One call site, two events (other peers): 30 calls of 2 us, 10 calls of 40 us.
    Trace t = sample_trace();
    Event near = test::call('x', 8, 0);
    Event far = test::call('x', 8, 0);
    far.params[0].value = Value(int64_t{3});
    near.compute = far.compute = near.in_call = far.in_call = TimeStats{};
    for (int i = 0; i < 30; ++i) {
        near.compute.add(1e-6);
        near.in_call.add(2e-6);
    }
    for (int i = 0; i < 10; ++i) {
        far.compute.add(1e-6);
        far.in_call.add(40e-6);
    }
    t.body.insert(t.body.end(), {Node{near}, Node{far}});
    const DecodeResult read = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    const Event& near_back = read.trace->body[read.trace->body.size() - 2].event();
    const Event& far_back = read.trace->body.back().event();
    CHECK(near_back.in_call.count == 30);
    CHECK(far_back.in_call.count == 10);
    TimeStats site = near.in_call;
    site.merge(far.in_call);
    CHECK(near_back.in_call.mean == doctest::Approx(site.mean).epsilon(0.00035));
    CHECK(far_back.in_call.mean == doctest::Approx(site.mean).epsilon(0.00035));
    CHECK(near_back.in_call.total() + far_back.in_call.total() == doctest::Approx(site.total()).epsilon(0.00035));
    CHECK(far_back.in_call.max >= 40e-6);
    CHECK(near_back.in_call.min <= 2e-6);
}

TEST_CASE("the time codes keep a time from a nanosecond to an hour within their steps")
{
    for (double seconds = 1e-9; seconds < 3600; seconds *= 1.37) {
        CHECK(time_code::mean_seconds(time_code::mean_code(seconds)) == doctest::Approx(seconds).epsilon(0.00035));
        CHECK(time_code::spread_seconds(time_code::spread_code(seconds)) == doctest::Approx(seconds).epsilon(0.06));
        const double low = time_code::spread_seconds(time_code::spread_code(seconds, time_code::Rounding::down));
        const double high = time_code::spread_seconds(time_code::spread_code(seconds, time_code::Rounding::up));
        CHECK(low <= seconds);
        CHECK(high >= seconds);
        CHECK(high <= seconds * 1.123 + 0.123e-9);  // steps of 1 + nanoseconds
        // Decoded, encoded again: the same code.
        for (auto rounding : {time_code::Rounding::nearest, time_code::Rounding::down, time_code::Rounding::up}) {
            const uint8_t code = time_code::spread_code(seconds, rounding);
            CHECK(time_code::spread_code(time_code::spread_seconds(code), rounding) == code);
        }
        const uint16_t mean = time_code::mean_code(seconds);
        CHECK(time_code::mean_code(time_code::mean_seconds(mean)) == mean);
    }
    CHECK(time_code::mean_seconds(time_code::mean_code(0)) == 0);
    CHECK(time_code::mean_code(1e30) == 0xffff);
    CHECK(time_code::spread_code(std::numeric_limits<double>::quiet_NaN()) == 0);
}

namespace {

// A trace of one event on ranks 0-3 whose destination is stored as `entries` (value, ranks), in
// that order and grouping, as another writer might have put it.
Trace with_destination_as(const std::vector<std::pair<int64_t, std::vector<Rank>>>& entries)
{
    std::vector<uint8_t> packed;
    pack_unsigned(packed, entries.size() << 1);
    for (const auto& [value, ranks] : entries) {
        pack_signed(packed, value);
        RankList::from_sorted(ranks).pack(packed);
    }
    Trace t;
    t.header.ranks = 4;
    Event e = test::call('d', 8, 0);
    e.ranks = RankList::from_sorted({0, 1, 2, 3});
    e.params[0].value = Value::from_canonical(packed);
    t.body.push_back(Node{e});
    return t;
}

}  // namespace

TEST_CASE("a file's per-rank value in another grouping reads back in the canonical form")
{
    // Ranks 0 and 2 sent to 1, ranks 1 and 3 to 2: written one entry per rank, out of order.
    const Trace written = with_destination_as({{2, {3}}, {1, {0}}, {2, {1}}, {1, {2}}});
    const DecodeResult read = decode_trace(encode_trace(written));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    const Value canonical(std::vector<PerRankValue>{{1, RankList::from_sorted({0, 2})}, {2, RankList::from_sorted({1, 3})}});
    const Value& destination = read.trace->body.front().event().params[0].value;
    CHECK(destination == canonical);
    for (Rank r = 0; r < 4; ++r) CHECK(destination.value_for(r) == (r % 2 == 0 ? 1 : 2));
}

TEST_CASE("a file that gives one rank two per-rank values is refused")
{
    const DecodeResult read = decode_trace(encode_trace(with_destination_as({{1, {0, 1}}, {2, {1, 2}}})));
    CHECK_FALSE(read.trace.has_value());
    CHECK(read.error.find("a rank with two per-rank values") != std::string::npos);
}

TEST_CASE("a call site's signature is stored once, however many events it has")
{
    Trace one_site;
    one_site.header.ranks = 2;
    Trace fifty_sites;
    for (int i = 0; i < 50; ++i) {
        one_site.body.push_back(Node{test::call('a', 8 + i, 0)});
        fifty_sites.body.push_back(Node{test::call(static_cast<char>('0' + i), 8 + i, 0)});
    }
    // Each of the 49 more signatures costs its 4 bytes (uncompressed: these test signatures are
    // mostly zero bytes, which zstd would take away).
    CHECK(encode_trace(fifty_sites, false).size() - encode_trace(one_site, false).size() >= 49 * 4);
    const DecodeResult read = decode_trace(encode_trace(one_site));
    REQUIRE(read.trace.has_value());
    CHECK(*read.trace == one_site);
}

TEST_CASE("a file keeps a signature's low 32 bits; the merge's messages keep all 64")
{
    Trace t;
    t.header.ranks = 2;
    Event e = test::call('a', 8, 0);
    e.signature = 0x0123456789abcdefull;
    t.body.push_back(Node{e});
    const DecodeResult file = decode_trace(encode_trace(t));
    REQUIRE(file.trace.has_value());
    CHECK(file.trace->body.front().event().signature == 0x89abcdefull);
    const auto message = decode_sequence(encode_sequence(t.body));
    REQUIRE(message.sequence.has_value());
    CHECK(message.sequence->front().event().signature == 0x0123456789abcdefull);
}

TEST_CASE("a truncated file of any length is refused with a message, never a crash")
{
    const auto bytes = encode_trace(sample_trace());
    for (size_t length = 0; length < bytes.size(); ++length) {
        std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + static_cast<long>(length));
        const DecodeResult read = decode_trace(cut);
        CAPTURE(length);
        CHECK_FALSE(read.trace.has_value());
        CHECK_FALSE(read.error.empty());
    }
    std::vector<uint8_t> cut(bytes.begin(), bytes.end() - 10);
    CHECK(decode_trace(cut).error ==
          "truncated at byte " + std::to_string(bytes.size() - 10) + " (expected " + std::to_string(bytes.size()) + ")");
}

TEST_CASE("a corrupt byte anywhere is caught by the checksum or the format")
{
    const auto bytes = encode_trace(sample_trace());
    for (size_t at = 0; at < bytes.size(); ++at) {
        auto bad = bytes;
        bad[at] ^= 0x5a;
        CAPTURE(at);
        CHECK_FALSE(decode_trace(bad).trace.has_value());
    }
    auto bad = bytes;
    bad[bytes.size() / 2] ^= 1;
    CHECK(decode_trace(bad).error == "corrupt: checksum mismatch");
}

TEST_CASE("a loop that would leave out more of its body than it has is refused")
{
    Trace t;
    t.header.ranks = 2;
    Loop loop{Value(int64_t{3}), {Node{test::call('e', 8, 0)}}};
    loop.last_leaves_out = 2;
    t.body.push_back(Node{loop});
    CHECK(decode_trace(encode_trace(t)).error.find("leaves out more nodes than its body has") != std::string::npos);
}

TEST_CASE("a file of another format version or not a trace at all says so")
{
    auto bytes = encode_trace(sample_trace());
    bytes[16] = kTraceFormatVersion + 1;  // the version follows the magic and the size
    CHECK(decode_trace(bytes).error.find("format version " + std::to_string(kTraceFormatVersion + 1) + " is newer") !=
          std::string::npos);
    const std::vector<uint8_t> text{'h', 'e', 'l', 'l', 'o'};
    CHECK(decode_trace(text).error.find("not an h-trace file") != std::string::npos);
}

TEST_CASE("a trace that repeats itself is stored compressed, and reads back equal either way")
{
    // A command line of one option repeated: the header keeps it as written.
    Trace t = sample_trace();
    t.header.command_line = "./app";
    for (int i = 0; i < 500; ++i) t.header.command_line += " --block-size=64";
    const std::vector<uint8_t> plain = encode_trace(t, false);
    const std::vector<uint8_t> packed = encode_trace(t);
    CHECK(plain.size() > t.header.command_line.size());
    CHECK(packed.size() * 4 < t.header.command_line.size());
    for (const auto* bytes : {&plain, &packed}) {
        const DecodeResult read = decode_trace(*bytes);
        REQUIRE(read.trace.has_value());
        CHECK(*read.trace == t);
    }
    Trace tiny;
    tiny.header.ranks = 2;
    tiny.body.push_back(Node{test::call('a')});
    CHECK(decode_trace(encode_trace(tiny)).trace == tiny);
    // Above 1 MiB (in a run of no traced time) a faster level is used; the file reads back the same way.
    Trace large = t;
    for (int i = 0; encode_trace(large, false).size() < (size_t{3} << 19); ++i) {
        for (int k = 0; k < 1000; ++k) large.body.push_back(Node{test::call('a' + (i + k) % 7, (i * 1000 + k) % 977, 0)});
    }
    const std::vector<uint8_t> large_bytes = encode_trace(large);
    CHECK(large_bytes.size() * 4 < encode_trace(large, false).size());
    CHECK(decode_trace(large_bytes).trace == large);
}

TEST_CASE("a short run's trace is compressed at a faster level than a long run's, and reads back equal")
{
    // Small traces get the strongest level whatever the run; larger ones a weaker level the shorter
    // the run, never below 3; a longer run never gets a weaker level, nor a larger payload a stronger one.
    CHECK(compression_level(2048, 0.0) == 19);
    CHECK(compression_level(size_t{1} << 20, 3600.0) == 19);
    CHECK(compression_level(size_t{1} << 20, 0.1) < 19);
    CHECK(compression_level(size_t{1} << 30, 0.0) == 3);
    for (const size_t bytes : {size_t{1} << 12, size_t{1} << 16, size_t{1} << 20, size_t{1} << 24}) {
        for (const double seconds : {0.0, 0.1, 1.0, 10.0, 100.0}) {
            CAPTURE(bytes);
            CAPTURE(seconds);
            CHECK(compression_level(bytes, seconds) >= 3);
            CHECK(compression_level(bytes, seconds * 10 + 1) >= compression_level(bytes, seconds));
            CHECK(compression_level(bytes * 4, seconds) <= compression_level(bytes, seconds));
        }
    }
    // The level reaches the file: a payload of some hundred KiB compresses less in a short run.
    Trace t = sample_trace();
    for (int k = 0; k < 20000; ++k) t.body.push_back(Node{test::call('a' + k % 7, (k * 7919) % 977, 0)});
    REQUIRE(encode_trace(t, false).size() > (size_t{1} << 17));
    t.header.traced_seconds = 0.01;
    const std::vector<uint8_t> short_run = encode_trace(t);
    Trace long_run_trace = t;
    long_run_trace.header.traced_seconds = 3600;
    const std::vector<uint8_t> long_run = encode_trace(long_run_trace);
    CHECK(short_run.size() > long_run.size());
    CHECK(decode_trace(short_run).trace == t);
    CHECK(decode_trace(long_run).trace == long_run_trace);
}

TEST_CASE("a compressed trace damaged behind an intact checksum says so")
{
    Trace t = sample_trace();
    t.header.command_line = std::string(4000, 'x');
    std::vector<uint8_t> bytes = encode_trace(t);
    // The compressed frame starts after the magic, the size, the version and the form byte.
    bytes[18] ^= 0x40;
    boost::crc_32_type crc;
    crc.process_bytes(bytes.data(), bytes.size() - 4);
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<uint8_t>(crc.checksum() >> (8 * i));
    const DecodeResult read = decode_trace(bytes);
    CHECK_FALSE(read.trace.has_value());
    CHECK(read.error.find("corrupt") == 0);
}

TEST_CASE("the completed sets of a file older than format 12 are read in today's form")
{
    // Before 12 a single position was a bit mask: 4 named position 2, 2 position 1, 6 positions
    // 1 and 2. Formats 11 to 20 differ in nothing else this trace holds (its histogram is not alike
    // on every rank, its event has no times, whose count has two flags from 18) but the signature's
    // width, the header's count of topologies (15), its run id, host and stops (16), its lines of
    // extrapolation (17), the times in calls after the body (18), whether the header has the
    // ranks' times (19) and the call sites' locations after the body (20), so a file of today's format
    // relabelled 11, with its signature widened to 8 bytes and without those fields, is what a
    // build of format 11 wrote with these values.
    Trace t;
    t.header.ranks = 2;
    Event waitany = test::call('w', 8, 0, Op::Waitany);
    waitany.ranks = RankList::from_sorted({0, 1});
    waitany.compute = TimeStats{};
    Histogram old_draws(t.header.histogram);
    old_draws.add(4, 0, 3);
    old_draws.add(8, 1, 1);
    waitany.params = {{Role::completed_set, Value(4)},
                      {Role::completed_set, Value(std::vector<PerRankValue>{{2, RankList(0)}, {6, RankList(1)}})},
                      {Role::completed_set, Value(old_draws)}};
    // The header ends where a trace with nothing in its body ends, but for the body's count of nodes and
    // of opaque names, its count of modules, and the CRC: its last 13 bytes are the count of topologies, the run id (8 bytes),
    // the host's length, the count of stops, the count of lines of extrapolation and the flag of the
    // ranks' times, all 0.
    const size_t header_end = encode_trace(t, false).size() - kEmptyBodyBytes;
    constexpr size_t kNewerHeaderBytes = 13;
    t.body = {Node{waitany}};
    std::vector<uint8_t> bytes = encode_trace(t, false);
    REQUIRE(bytes[16] == kTraceFormatVersion);
    const auto newer = bytes.begin() + static_cast<std::ptrdiff_t>(header_end - kNewerHeaderBytes);
    REQUIRE(std::all_of(newer, newer + kNewerHeaderBytes, [](uint8_t b) { return b == 0; }));
    bytes.erase(newer, newer + kNewerHeaderBytes);
    // Format 18's table of times in calls and format 20's of locations after the body: its one call
    // site has neither (no modules, then 0 for the site).
    const auto site_tables = bytes.end() - 4 - 4;
    REQUIRE((site_tables[0] == 0xff && site_tables[1] == 0xff && site_tables[2] == 0 && site_tables[3] == 0));
    bytes.erase(site_tables, site_tables + 4);
    bytes[16] = 11;
    // The signature 'w', new (index 0), in 4 bytes: 0, 'w', 0, 0, 0.
    const std::vector<uint8_t> narrow{0, 'w', 0, 0, 0};
    const auto at = std::search(bytes.begin(), bytes.end(), narrow.begin(), narrow.end());
    REQUIRE(at != bytes.end());
    bytes.insert(at + static_cast<std::ptrdiff_t>(narrow.size()), 4, 0);
    fix_size_and_checksum(bytes);
    const DecodeResult read = decode_trace(bytes);
    REQUIRE(read.trace.has_value());
    const auto& params = read.trace->body.at(0).event().params;
    REQUIRE(params.size() == 3);
    const auto positions = [](std::optional<int64_t> value) {
        return decode_completed_set(std::vector<int64_t>{value.value_or(kUnknownCompletedSet)}, 10)
            .value_or(std::vector<uint32_t>{99});
    };
    CHECK(positions(params[0].value.value_for(0)) == std::vector<uint32_t>{2});
    CHECK(positions(params[1].value.value_for(0)) == std::vector<uint32_t>{1});
    CHECK(positions(params[1].value.value_for(1)) == std::vector<uint32_t>{1, 2});
    const Histogram& draws = params[2].value.histogram();
    REQUIRE(draws.bins().size() == 2);
    CHECK(positions(draws.bin_value(0)) == std::vector<uint32_t>{2});
    CHECK(draws.bins()[0].count == 3);
    CHECK(positions(draws.bin_value(1)) == std::vector<uint32_t>{3});
    CHECK(draws.bins()[1].count == 1);
    // Read as written by this format, the same values are today's single positions.
    CHECK(decode_trace(encode_trace(t, false)).trace->body.at(0).event().params[0].value.exact() == 4);
}

TEST_CASE("a peer histogram's seen values take a few bytes as runs where they fill a range")
{
    // Relative peers at 64 ranks: every value 1..63 seen, as a neighbour exchange on a torus gives.
    Histogram dense(HistogramConfig{});
    dense.keep_seen_values();
    for (int64_t peer = 1; peer < 64; ++peer) dense.add(peer, 0);
    // A few values far apart: stored as deltas, as before runs existed.
    Histogram sparse(HistogramConfig{});
    sparse.keep_seen_values();
    for (int64_t peer : {1, 15, 40}) sparse.add(peer, 0);
    Histogram without_seen(HistogramConfig{});
    for (int64_t peer = 1; peer < 64; ++peer) without_seen.add(peer, 0);
    const size_t dense_bytes = encoded_size(Value(dense));
    const size_t without_bytes = encoded_size(Value(without_seen));
    CHECK(dense_bytes <= without_bytes + 4);  // one run: its count, first value and length

    for (const Histogram& h : {dense, sparse, without_seen}) {
        const auto read = histogram_read_back(h);
        REQUIRE(read.has_value());
        CHECK(read->seen_values() == h.seen_values());
    }
}

TEST_CASE("seen values of a histogram whose bins are full cost a bit per value its wide bins span")
{
    // Peers that are every third rank, more of them than bins: some bins hold several.
    Histogram peers(HistogramConfig{});
    peers.keep_seen_values();
    Histogram without_seen(HistogramConfig{});
    for (int64_t peer = 3; peer < 192; peer += 3) {
        peers.add(peer, 0);
        without_seen.add(peer, 0);
    }
    REQUIRE(peers.bins() == without_seen.bins());
    uint64_t spanned = 0;
    for (const auto& bin : peers.bins()) spanned += bin.max > bin.min ? static_cast<uint64_t>(bin.max - bin.min + 1) : 0;
    REQUIRE(spanned > 0);
    // The form's byte, then the bits; a value each, as deltas, would take 63 bytes.
    CHECK(encoded_size(Value(peers)) <= encoded_size(Value(without_seen)) + 1 + (spanned + 7) / 8);
    const auto read = histogram_read_back(peers);
    REQUIRE(read.has_value());
    CHECK(read->seen_values() == peers.seen_values());
}

TEST_CASE("a bin's moments that are integers cost a few bytes, and read back unchanged")
{
    // 4 bins over 0..99: a bin of several values stores a mean and a sum of squares.
    Histogram wide(HistogramConfig{4, 64});
    for (int64_t v = 0; v < 100; ++v) wide.add(v, 0);
    size_t wide_bins = 0;
    for (const auto& bin : wide.bins()) wide_bins += bin.max > bin.min ? 1 : 0;
    REQUIRE(wide_bins >= 2);
    // As doubles, these moments alone would take 16 bytes per bin.
    CHECK(encoded_size(Value(wide)) < 16 * wide_bins);

    // One bin over nearly all of int64 (merged completion sets come close): its moments stay doubles.
    Histogram vast(HistogramConfig{1, 64});
    vast.add(-(int64_t{1} << 62), 0);
    vast.add(int64_t{1} << 62, 1, 3);
    REQUIRE(vast.bins().size() == 1);

    for (const Histogram& h : {wide, vast}) CHECK(histogram_read_back(h) == h);
}

TEST_CASE("a trace file many reading windows long reads back equal from disk, compressed or not")
{
    // Per-rank values that differ call by call (an irregular code's), so that the contents are far
    // longer than the 64 KiB the reader holds at a time, and zstd leaves much of them.
    Trace t;
    t.header.ranks = 64;
    std::mt19937 rng(2024);
    for (int i = 0; i < 12000; ++i) {
        Event e = test::call('a' + i % 7, 8, 0);
        e.ranks = RankList::from_sorted({0, 5, 9, 33, 34, 35, 63});
        std::vector<PerRankValue> peers;
        for (Rank r : e.ranks.expand()) peers.push_back({static_cast<int64_t>(rng() % 64), RankList(r)});
        e.params[0].value = Value(peers);
        t.body.push_back(Node{e});
    }
    const auto path = std::filesystem::temp_directory_path() / ("h-trace-test-" + std::to_string(::getpid()) + ".h");
    for (const bool compress : {true, false}) {
        CAPTURE(compress);
        const std::vector<uint8_t> bytes = encode_trace(t, compress);
        CHECK(bytes.size() > (size_t{2} << 16));
        {
            std::ofstream file(path, std::ios::binary | std::ios::trunc);
            file.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        }
        const DecodeResult read = read_trace_file(path.string());
        REQUIRE(read.trace.has_value());
        CHECK(*read.trace == t);
        // Cut short on disk, it says so as it did in memory.
        std::filesystem::resize_file(path, bytes.size() - 10);
        CHECK(read_trace_file(path.string()).error ==
              "truncated at byte " + std::to_string(bytes.size() - 10) + " (expected " + std::to_string(bytes.size()) + ")");
    }
    std::filesystem::remove(path);
}

TEST_CASE("a failed write leaves the file that was there and no temporary file")
{
    const std::string dir = "/tmp/htrace-write-" + std::to_string(::getpid());
    std::filesystem::create_directory(dir);
    const std::string path = dir + "/trace.h";
    Trace earlier = sample_trace();
    earlier.header.stops.clear();
    REQUIRE(write_trace_file(path, earlier).empty());
    const auto before = encode_trace(earlier);
    // The temporary name taken by a directory: the new trace cannot be written there.
    std::filesystem::create_directory(path + ".tmp." + std::to_string(::getpid()));
    CHECK_FALSE(write_trace_file(path, sample_trace()).empty());
    std::ifstream file(path, std::ios::binary);
    const std::vector<uint8_t> after((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    CHECK(after == before);
    std::filesystem::remove(path + ".tmp." + std::to_string(::getpid()));
    CHECK(write_trace_file(path, sample_trace()).empty());
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}) == 1);
    std::filesystem::remove_all(dir);
}

TEST_CASE("the run's id and host, and an incomplete trace's stops, are read back; a complete trace has none")
{
    const DecodeResult read = decode_trace(encode_trace(sample_trace()));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    CHECK(read.trace->header.run_id == 0xfedcba9876543210ull);
    CHECK(read.trace->header.host == "node17");
    CHECK(read.trace->header.incomplete());
    CHECK(read.trace->header.stops == std::vector<RankStop>{{2, 40, "got SIGTERM"}, {5, 41, "called MPI_Abort (error code 3)"}});
    CHECK_FALSE(TraceHeader{}.incomplete());
    CHECK(format_run_id(0xfedcba9876543210ull) == "fedcba9876543210");
    CHECK(format_run_id(1) == "0000000000000001");
}

TEST_CASE("call sites' locations read back by their signatures, a module named once; format 19 has none")
{
    Trace t = sample_trace();
    // 's' and 'b' in the executable, 'w' in a library, the rest nowhere.
    t.locations = {{'s', {"/home/user/app", 0x1a2b}}, {'b', {"/home/user/app", 0x40}},
                   {'w', {"/usr/lib/libsolver.so", 0x7f00}}};
    const std::vector<uint8_t> bytes = encode_trace(t, false);
    const DecodeResult read = decode_trace(bytes);
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    CHECK(read.trace->locations == t.locations);
    const std::string text(bytes.begin(), bytes.end());
    const auto occurrences = [&](const std::string& s) {
        size_t n = 0;
        for (size_t at = text.find(s); at != std::string::npos; at = text.find(s, at + 1)) ++n;
        return n;
    };
    CHECK(occurrences("/home/user/app") == 1);
    CHECK(occurrences("/usr/lib/libsolver.so") == 1);

    // A site that names a module the table does not have is refused.
    Trace one_site;
    one_site.header = t.header;
    one_site.body = {Node{test::call('s', 8, 0)}};
    std::vector<uint8_t> empty_sites = encode_trace(one_site, false);
    const auto site = empty_sites.end() - 4 - 1;  // the one site's module, before the CRC
    REQUIRE(*site == 0);
    *site = 1;
    fix_size_and_checksum(empty_sites);
    const DecodeResult bad = decode_trace(empty_sites);
    CHECK_FALSE(bad.trace.has_value());
    CHECK(bad.error.find("corrupt: call site 0 names module 1 of 0") == 0);

    // Format 19 ends the file before the count of modules: today's file without it, relabelled 19,
    // is what a build of format 19 wrote.
    Trace plain;
    plain.header.ranks = 2;
    std::vector<uint8_t> old_bytes = encode_trace(plain, false);
    drop_count_of_modules(old_bytes);
    old_bytes[16] = 19;
    fix_size_and_checksum(old_bytes);
    const DecodeResult old = decode_trace(old_bytes);
    REQUIRE_MESSAGE(old.trace.has_value(), old.error);
    CHECK(old.trace->locations.empty());
}

TEST_CASE("an extrapolated trace's record is read back; a format 16 file has none")
{
    Trace t = sample_trace();
    t.header.extrapolation = {"from a.h (4 ranks), b.h (8 ranks), c.h (16 ranks)", "event 3 (MPI_Send) bytes: 4096 * N^-1"};
    const DecodeResult read = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    CHECK(read.trace->header.extrapolation == t.header.extrapolation);
    CHECK(read.trace->header.extrapolated());
    CHECK_FALSE(sample_trace().header.extrapolated());

    // Format 16 ends the header where 17 writes the count of lines (0 here) and 19 whether it has
    // the ranks' times (0), and has no count of modules after the body (20): today's file without
    // those bytes, relabelled 16, is what a build of format 16 wrote.
    Trace plain;
    plain.header.ranks = 2;
    std::vector<uint8_t> bytes = encode_trace(plain, false);
    const size_t count_at = bytes.size() - kEmptyBodyBytes - 2;
    REQUIRE((bytes[count_at] == 0 && bytes[count_at + 1] == 0));
    bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(count_at), bytes.begin() + static_cast<std::ptrdiff_t>(count_at + 2));
    drop_count_of_modules(bytes);
    bytes[16] = 16;
    fix_size_and_checksum(bytes);
    const DecodeResult old = decode_trace(bytes);
    REQUIRE_MESSAGE(old.trace.has_value(), old.error);
    CHECK_FALSE(old.trace->header.extrapolated());
}

TEST_CASE("where the ranks' time went reads back within the 16-bit codes, the least and most as bounds; format 18 has none")
{
    Trace t = sample_trace();
    RankTimes times;
    times.computation = {0.25, 2, 0.5, 1.25, 6};
    times.mpi = {1e-5, 7, 0.125, 0.75, 0};
    times.io = {0, 0, 3e-3, 0.02, 3};
    times.mpi_share = {0.01, 7, 0.2, 0.75, 0};
    times.io_share = {0, 0, 0.01, 0.03, 3};
    times.tracer = RankSpread{2e-6, 5, 4e-5, 0.025, 1};
    t.header.rank_times = times;
    const DecodeResult read = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(read.trace.has_value(), read.error);
    REQUIRE(read.trace->header.rank_times.has_value());
    const RankTimes& got = *read.trace->header.rank_times;
    REQUIRE(got.tracer.has_value());
    const std::pair<const RankSpread*, const RankSpread*> pairs[] = {{&got.computation, &times.computation},
                                                                     {&got.mpi, &times.mpi},
                                                                     {&got.io, &times.io},
                                                                     {&got.mpi_share, &times.mpi_share},
                                                                     {&got.io_share, &times.io_share},
                                                                     {&*got.tracer, &*times.tracer}};
    for (const auto& [read_back, written] : pairs) {
        CHECK(read_back->min_rank == written->min_rank);
        CHECK(read_back->max_rank == written->max_rank);
        CHECK(read_back->min <= written->min);
        CHECK(read_back->max >= written->max);
        for (const auto& [a, b] : {std::pair{read_back->min, written->min}, std::pair{read_back->mean, written->mean},
                                   std::pair{read_back->max, written->max}}) {
            CHECK(a == doctest::Approx(b).epsilon(0.001));
        }
    }

    // Format 19 ends the header with whether it has them (0 here), and 20 counts modules after the
    // body: today's file without those bytes, relabelled 18, is what a build of format 18 wrote.
    Trace plain;
    plain.header.ranks = 2;
    std::vector<uint8_t> bytes = encode_trace(plain, false);
    const size_t flag_at = bytes.size() - kEmptyBodyBytes - 1;
    REQUIRE(bytes[flag_at] == 0);
    bytes.erase(bytes.begin() + static_cast<std::ptrdiff_t>(flag_at));
    drop_count_of_modules(bytes);
    bytes[16] = 18;
    fix_size_and_checksum(bytes);
    const DecodeResult old = decode_trace(bytes);
    REQUIRE_MESSAGE(old.trace.has_value(), old.error);
    CHECK_FALSE(old.trace->header.rank_times.has_value());

    // Formats 19 and 20 have no tracer's time: unknown, not zero, as a file of today without it.
    times.tracer.reset();
    t.header.rank_times = times;
    const DecodeResult without = decode_trace(encode_trace(t));
    REQUIRE_MESSAGE(without.trace.has_value(), without.error);
    REQUIRE(without.trace->header.rank_times.has_value());
    CHECK_FALSE(without.trace->header.rank_times->tracer.has_value());
}
