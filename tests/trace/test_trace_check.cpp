// The reader refuses damaged and hostile traces with one line naming the field and the event (issue
// 26): each case builds its damaged trace itself, as a Trace with the bad value or as the bytes of a
// good one patched, with its size and checksum fixed up so that only the reader's checks stand
// between the damage and the tools.
#include "trace/trace_check.hpp"

#include "support/trace_builders.hpp"
#include "trace/file_names.hpp"
#include "trace/limits.hpp"
#include "trace/render.hpp"
#include "trace/trace_file.hpp"

#include <boost/crc.hpp>
#include <doctest/doctest.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace htrace;

namespace {

constexpr int32_t kRanks = 64;

// A trace of 64 ranks: a loop of sends around the ring, a file written, a collective.
Trace good_trace()
{
    Trace t;
    t.header.ranks = kRanks;
    t.header.traced_seconds = 10;
    t.header.command_line = "./app";
    t.header.file_names = {{11, "out_{rank:04}.dat"}};
    std::vector<Rank> all;
    for (Rank r = 0; r < kRanks; ++r) all.push_back(r);
    Event send = test::call('s', 800, 0);
    send.ranks = RankList::from_sorted(all);
    Histogram counts(t.header.histogram);
    for (int i = 0; i < 20; ++i) counts.add(10 + i % 3, i % kRanks);
    t.body.push_back(Node{Loop{Value(counts, true), {Node{send}}}});
    Event open = test::call('o', 0, 0, Op::File_open);
    open.ranks = send.ranks;
    open.params = {{Role::comm, Value(int64_t{0})}, {Role::file_name, Value(int64_t{11})}, {Role::file, Value(int64_t{0})}};
    t.body.push_back(Node{open});
    Event barrier = test::collective('b', 0, Op::Barrier);
    barrier.ranks = send.ranks;
    t.body.push_back(Node{barrier});
    return t;
}

// The reader's answer to `t` as a file: its error, "" where it read.
std::string refusal(const Trace& t)
{
    const DecodeResult read = decode_trace(encode_trace(t));
    CHECK(read.trace.has_value() == read.error.empty());
    return read.error;
}

// The first event of the first loop: the sends.
Event& sends(Trace& t) { return t.body.at(0).loop().body.at(0).event(); }

Param& param(Event& e, Role role)
{
    for (auto& p : e.params) {
        if (p.role == role) return p;
    }
    FAIL("no such parameter");
    return e.params.front();
}

// Bytes of a trace file with the total size and the checksum made to match what they now hold.
void fix_size_and_checksum(std::vector<uint8_t>& bytes)
{
    for (int i = 0; i < 8; ++i) bytes[8 + i] = static_cast<uint8_t>(bytes.size() >> (8 * i));
    boost::crc_32_type crc;
    crc.process_bytes(bytes.data(), bytes.size() - 4);
    for (int i = 0; i < 4; ++i) bytes[bytes.size() - 4 + i] = static_cast<uint8_t>(crc.checksum() >> (8 * i));
}

bool contains(const std::string& text, const std::string& part)
{
    INFO(text);
    return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("the trace the refusals below start from reads")
{
    CHECK(refusal(good_trace()) == "");
}

TEST_CASE("a header with 0 histogram bins is refused")
{
    Trace t = good_trace();
    t.header.histogram.bins = 0;
    CHECK(refusal(t) == "corrupt: header: histogram bins 0 is outside 1..65536");
}

TEST_CASE("a header with a rebalance interval of 0 is refused")
{
    Trace t = good_trace();
    t.header.histogram.rebalance_interval = 0;
    CHECK(refusal(t) == "corrupt: header: rebalance interval 0 is outside 1..1073741824");
}

TEST_CASE("a rank list that names a rank beyond the rank count is refused, naming the event")
{
    Trace t = good_trace();
    sends(t).ranks = RankList::from_sorted({0, 1, 2, 70});
    CHECK(contains(refusal(t), "corrupt: event 1 (MPI_Send): a rank list: rank 70 is not a rank of a 64-rank trace"));
    // A rank listed twice (a run of stride 0) is refused too: a walk would make its calls twice.
    t = good_trace();
    sends(t).ranks = RankList::from_runs({RankRun{3, {{5, 0}}}});
    CHECK(contains(refusal(t), "corrupt: event 1 (MPI_Send): participants: a rank is listed twice"));
}

TEST_CASE("a loop count of 10^15 is refused, not walked")
{
    Trace t = good_trace();
    t.body.at(0).loop().iterations = Value(int64_t{1'000'000'000'000'000});
    CHECK(refusal(t) == "corrupt: the loop starting at event 1 (MPI_Send): count 1000000000000000 is outside 0..1099511627776");
}

TEST_CASE("a compute time of 10^6 s per call in a run of 10 s is refused")
{
    Trace t = good_trace();
    sends(t).compute = TimeStats{};
    sends(t).compute.add(1e6);
    CHECK(contains(refusal(t), "corrupt: event 1 (MPI_Send): compute time 1000000 s is outside 0..12 s"));
}

TEST_CASE("a negative byte count is refused")
{
    Trace t = good_trace();
    param(sends(t), Role::bytes).value = Value(int64_t{-8});
    CHECK(refusal(t) == "corrupt: event 1 (MPI_Send): bytes -8 is outside 0..1099511627776");
}

TEST_CASE("a tag beyond what MPI allows is refused, and so is a peer beyond the rank count")
{
    Trace t = good_trace();
    param(sends(t), Role::tag).value = Value(int64_t{1} << 31);
    CHECK(refusal(t) == "corrupt: event 1 (MPI_Send): tag 2147483648 is outside -1..2147483647");
    t = good_trace();
    param(sends(t), Role::peer).value = Value(std::vector<PerRankValue>{{1, RankList::from_sorted({0, 1, 2})}, {64, RankList(3)}});
    CHECK(contains(refusal(t), "corrupt: event 1 (MPI_Send): peer 64 is outside -2..63"));
}

TEST_CASE("a file-name pattern with a rank 500,000,000 digits wide is refused")
{
    Trace t = good_trace();
    t.header.file_names[11] = "out_{rank:0500000000}.dat";
    CHECK(refusal(t) == "corrupt: header: file name 11 has a rank width of 500000000 (at most 16)");
}

TEST_CASE("a file name of many kilobytes is refused, and so is a command line of many more")
{
    Trace t = good_trace();
    t.header.file_names[11] = std::string(10'000, 'a');
    CHECK(refusal(t) == "corrupt: header: file name 11 of 10000 bytes is longer than 4096");
    t = good_trace();
    t.header.command_line = std::string(100'000, 'a');
    CHECK(refusal(t) == "corrupt: header: command line of 100000 bytes is longer than 65536");
}

TEST_CASE("text that is not valid UTF-8 is refused")
{
    Trace t = good_trace();
    t.header.file_names[11] = "out_\xff\xfe.dat";
    CHECK(refusal(t) == "corrupt: header: file name 11 is not valid UTF-8");
    t = good_trace();
    t.header.command_line = "./app \xc0\xaf";  // an overlong '/'
    CHECK(refusal(t) == "corrupt: header: command line is not valid UTF-8");
}

TEST_CASE("a call site's module that is not valid UTF-8 is refused")
{
    Trace t = good_trace();
    t.locations[sends(t).signature] = {"/home/user/app_\xff", 0x1234};
    CHECK(refusal(t) == "corrupt: the module of call site " + render_signature(sends(t).signature) +
                            " is not valid UTF-8");
}

TEST_CASE("a small zstd frame that claims 4 GiB is refused without the memory being asked for")
{
    // The contents of a good trace up to its MPI library's name, whose length then says 3 GB: a reader
    // that trusted it would ask for 3 GB before finding the frame ends.
    const std::vector<uint8_t> good = encode_trace(good_trace(), false);
    const size_t contents_start = 8 + 8 + 1 + 1;  // magic, size, version, form
    REQUIRE(good[16] == kTraceFormatVersion);
    std::vector<uint8_t> contents(good.begin() + contents_start, good.end() - 4);
    // The operation count, ranks, precision, bins and rebalance interval (varints), the seed (8 bytes).
    REQUIRE(good_trace().header.mpi_library.empty());
    size_t at = 0;
    for (int field = 0; field < 5; ++field) {
        while (contents.at(at) & 0x80) ++at;
        ++at;
    }
    at += 8;
    REQUIRE(contents.at(at) == 0);  // the MPI library's length
    contents.resize(at);
    for (uint64_t n = 3'000'000'000; n != 0; n >>= 7) contents.push_back(static_cast<uint8_t>(n >= 0x80 ? (n & 0x7f) | 0x80 : n));
    contents.resize(contents.size() + 64, 'x');

    for (const uint64_t claimed : {uint64_t{4} << 30, uint64_t{900} << 20}) {
        CAPTURE(claimed);
        ZSTD_CCtx* context = ZSTD_createCCtx();
        REQUIRE(ZSTD_isError(ZSTD_CCtx_setPledgedSrcSize(context, claimed)) == 0);
        std::vector<uint8_t> frame(ZSTD_compressBound(contents.size()) + 64);
        ZSTD_outBuffer out{frame.data(), frame.size(), 0};
        ZSTD_inBuffer in{contents.data(), contents.size(), 0};
        REQUIRE(ZSTD_isError(ZSTD_compressStream2(context, &out, &in, ZSTD_e_flush)) == 0);
        ZSTD_freeCCtx(context);
        frame.resize(out.pos);
        REQUIRE(ZSTD_getFrameContentSize(frame.data(), frame.size()) == claimed);

        // The good trace's magic, size and version, the form byte saying zstd, the frame, a checksum.
        std::vector<uint8_t> bytes(contents_start + frame.size() + 4);
        std::copy(good.begin(), good.begin() + contents_start, bytes.begin());
        bytes[contents_start - 1] = 1;
        std::copy(frame.begin(), frame.end(), bytes.begin() + contents_start);
        fix_size_and_checksum(bytes);

        // Decoded in a child whose address space is 256 MiB above what it uses already: asking for
        // gigabytes kills it (bad_alloc), a refusal exits 0.
        const std::string error_path = "/tmp/h-trace-test-zstd-" + std::to_string(::getpid());
        const pid_t child = fork();
        REQUIRE(child >= 0);
        if (child == 0) {
            long pages = 0;
            if (FILE* statm = std::fopen("/proc/self/statm", "r")) {
                if (std::fscanf(statm, "%ld", &pages) != 1) pages = 0;
                std::fclose(statm);
            }
            const rlim_t limit = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{256} << 20);
            const rlimit bounded{limit, limit};
            setrlimit(RLIMIT_AS, &bounded);
            const DecodeResult read = decode_trace(bytes);
            std::ofstream(error_path) << read.error;
            _exit(read.trace.has_value() ? 1 : 0);
        }
        int status = 0;
        REQUIRE(waitpid(child, &status, 0) == child);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
        std::string error;
        std::getline(std::ifstream(error_path), error);
        std::remove(error_path.c_str());
        CHECK(contains(error, "corrupt: the compressed trace claims " + std::to_string(claimed) + " bytes"));
    }
}

TEST_CASE("a text longer than the reader takes is refused before it is read, in a frame that claims little")
{
    // As above, but the frame claims what it holds: the length alone is refused.
    Trace t = good_trace();
    t.header.mpi_library = "MPI";
    std::vector<uint8_t> bytes = encode_trace(t, false);
    const std::vector<uint8_t> mpi_text{3, 'M', 'P', 'I'};
    const auto at = std::search(bytes.begin(), bytes.end(), mpi_text.begin(), mpi_text.end());
    REQUIRE(at != bytes.end());
    // 3 GB as a varint, where the length 3 stood.
    const std::vector<uint8_t> huge{0x80, 0xbc, 0xc1, 0x96, 0x0b};
    const auto offset = at - bytes.begin();
    bytes.erase(bytes.begin() + offset);
    bytes.insert(bytes.begin() + offset, huge.begin(), huge.end());
    fix_size_and_checksum(bytes);
    CHECK(contains(decode_trace(bytes).error, "corrupt: a text of 3000000000 bytes"));
}

TEST_CASE("a trace spliced into a loop of itself, whose walk would not end in days, is refused")
{
    // Each loop's count is within the limit, but the body is the trace itself, nested: a walk (h-dump
    // --calls, --sequence, --matrix, replay) would make 10^9 x 10^9 x 64 calls.
    Trace t = good_trace();
    for (int depth = 0; depth < 2; ++depth) t.body = {Node{Loop{Value(int64_t{1'000'000'000}), t.body}}};
    CHECK(contains(refusal(t), "corrupt: a walk of the trace takes up to"));
    // And a loop with nothing in it, iterated 2^39 times inside another: no call, but no end.
    t = good_trace();
    t.body.push_back(Node{Loop{Value(int64_t{1} << 20), {Node{Loop{Value(int64_t{1} << 39), {}}}}}});
    CHECK(contains(refusal(t), "corrupt: a walk of the trace takes up to"));
}

TEST_CASE("the walk's steps count every participant's call and every iteration")
{
    Trace t = good_trace();
    // The loop: 1 + 12 (its largest count) x (64 sends + 1); then 64 opens and 64 barriers.
    CHECK(walk_steps(t.body) == 1 + 12 * 65 + 64 + 64);
}

TEST_CASE("the tracer stores any file name a program gives as a pattern the reader takes")
{
    // Bytes that are no UTF-8 become U+FFFD; a rank padded wider than 16 digits stays literal; a name
    // longer than file systems take keeps its beginning.
    CHECK(file_name_pattern("out_\xff\xfe_0003.dat", 3) == "out_\xef\xbf\xbd\xef\xbf\xbd_{rank:04}.dat");
    CHECK(file_name_pattern("out_" + std::string(19, '0') + "3.dat", 3) == "out_" + std::string(19, '0') + "3.dat");
    const std::string braces(5000, '{');
    for (const std::string& name : {std::string("out_\xff\xfe_0003.dat"), braces, std::string(9000, 'a') + "_3",
                                    "dir\xc0\xaf" + std::string(3000, '}') + "_0003"}) {
        Trace t = good_trace();
        t.header.file_names[11] = file_name_pattern(name, 3);
        CHECK(t.header.file_names[11].size() <= limits::kMostNameBytes);
        CHECK(refusal(t) == "");
    }
}

TEST_CASE("a loop count bumped far beyond the calls its events recorded is refused")
{
    // Each send recorded its compute time: 12 iterations x 64 ranks at most. A count of 2^30 on two
    // ranks is within the limit of one loop, but would have h-dump --calls and replay make 2^31 sends.
    Trace t = good_trace();
    sends(t).compute = TimeStats{};
    for (int i = 0; i < 11 * kRanks; ++i) sends(t).compute.add(1e-6);
    std::vector<Rank> others;
    for (Rank r = 2; r < kRanks; ++r) others.push_back(r);
    t.body.at(0).loop().iterations =
        Value(std::vector<PerRankValue>{{int64_t{1} << 30, RankList::from_sorted({0, 1})}, {11, RankList::from_sorted(others)}});
    CHECK(contains(refusal(t), "corrupt: loop counts make"));
    t.body.at(0).loop().iterations = Value(int64_t{11});
    CHECK(refusal(t) == "");
}

TEST_CASE("an operation code damaged into a collective's, or a window no call made, is refused")
{
    // An MPI_Isend whose code became MPI_Ialltoall's: replay would issue the collective with a send's
    // sizes, and MPI would stop the job with a truncation error.
    Trace t = good_trace();
    sends(t).op = Op::Ialltoall;
    CHECK(refusal(t) == "corrupt: event 1 (MPI_Ialltoall): a collective with a peer");
    // A lock of window 12 where only window 0 was made.
    t = good_trace();
    Event create = test::collective('w', 0, Op::Win_create);
    create.ranks = sends(t).ranks;
    create.params = {{Role::comm, Value(int64_t{0})}, {Role::window, Value(int64_t{0})}, {Role::bytes, Value(int64_t{64})}};
    Event lock = test::collective('l', 4, Op::Win_lock);
    lock.params = {{Role::peer, Value(int64_t{1})}, {Role::lock_type, Value(kLockShared)}, {Role::window, Value(int64_t{0})}};
    t.body.push_back(Node{create});
    t.body.push_back(Node{lock});
    CHECK(refusal(t) == "");
    t.body.back().event().params.back().value = Value(int64_t{12});
    CHECK(refusal(t) == "corrupt: event 5 (MPI_Win_lock): window 12 is made by no call of the trace");
}

TEST_CASE("a refusal is one line, whatever the damaged text holds")
{
    // Found by the fuzzer: a pattern's field quoted with the newline it held.
    Trace t = good_trace();
    t.header.file_names[11] = "out_{r\nnk}.dat";
    CHECK(refusal(t) == "corrupt: header: file name 11 has a field {r?nk} that is not {rank} or {rank:0N}");
    // An unmodelled operation's name is a C function's name.
    t = good_trace();
    Event odd = test::call('x', 0, 0, operation_by_name("MPI_Odd\nname"));
    odd.params.clear();
    t.body.push_back(Node{odd});
    CHECK(refusal(t) == "corrupt: the name of unmodelled operation 0 is not a function's name");
}

TEST_CASE("where an incomplete trace's ranks stopped is checked against its ranks")
{
    Trace t = good_trace();
    t.header.stops = {{3, 120, "SIGTERM"}, {7, 80, "MPI_Abort"}};
    CHECK(refusal(t) == "");
    t.header.stops.push_back({kRanks, 5, "SIGTERM"});
    CHECK(contains(refusal(t), "the stop of rank 64: not a rank of the trace"));
    t.header.stops.back().rank = 3;
    CHECK(contains(refusal(t), "the stop of rank 3: given twice"));
    t.header.stops.back() = {9, 5, "\xff\xfe"};
    CHECK(contains(refusal(t), "the stop of rank 9"));
    t.header.stops.pop_back();
    t.header.host = std::string(limits::kMostNameBytes + 1, 'h');
    CHECK(contains(refusal(t), "host"));
}

TEST_CASE("where the ranks' time went is checked: ranks of the trace, a mean between least and most, shares to 1")
{
    Trace t = good_trace();
    RankTimes times;
    times.mpi = {0.5, 3, 1.0, 2.0, 7};
    times.mpi_share = {0.1, 3, 0.2, 0.4, 7};
    t.header.rank_times = times;
    CHECK(refusal(t) == "");
    t.header.rank_times->mpi.max_rank = kRanks;
    CHECK(contains(refusal(t), "the ranks' time in MPI names a rank not of the trace"));
    t.header.rank_times->mpi.max_rank = 7;
    t.header.rank_times->io = {2.0, 1, 1.0, 3.0, 2};
    CHECK(contains(refusal(t), "the ranks' time in I/O has a mean"));  // as the 16-bit codes read back
    t.header.rank_times->io = {};
    t.header.rank_times->io_share = {0.5, 1, 1.5, 2.0, 2};
    CHECK(contains(refusal(t), "a rank's share of its time is above 1"));
    t.header.rank_times->io_share = {};
    t.header.rank_times->tracer = RankSpread{1e-3, 0, 2e-3, 3e-3, kRanks};
    CHECK(contains(refusal(t), "the ranks' time in the tracer names a rank not of the trace"));
}
