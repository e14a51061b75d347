// h-dump's views under hostile traces: JSON strings stay valid UTF-8 whatever bytes the trace holds,
// counting views cost the trace's size however many calls its loops stand for, and --sequence refuses
// a sequence longer than its limit instead of printing for ever.
#include "trace/render.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

using namespace htrace;

namespace {

RankList all_ranks(int32_t ranks)
{
    std::vector<Rank> sorted;
    for (Rank r = 0; r < ranks; ++r) sorted.push_back(r);
    return RankList::from_sorted(sorted);
}

Event on_ranks(Event e, const RankList& participants)
{
    e.ranks = participants;
    return e;
}

std::string call_counts(const Trace& trace)
{
    std::ostringstream out;
    CHECK(render_call_counts(out, trace) == "");
    return out.str();
}

std::string sequence(const Trace& trace, uint64_t max_calls = kDefaultMaxCalls)
{
    std::ostringstream out;
    CHECK(render_sequence(out, trace, max_calls) == "");
    return out.str();
}

// A comm_dup of the world on every rank: a loop around it cannot be visited once.
Event dup(const RankList& participants)
{
    Event e;
    e.op = Op::Comm_dup;
    e.signature = 'd';
    e.ranks = participants;
    e.params = {{Role::comm, Value(int64_t{0})}, {Role::new_comm, Value(int64_t{2})},
                {Role::color, Value(int64_t{0})}, {Role::key, Value(std::vector<PerRankValue>{{0, participants, 1}})}};
    return e;
}

}  // namespace

TEST_CASE("JSON strings escape control characters and replace bytes that are not UTF-8 by U+FFFD")
{
    const std::string replacement = "\xef\xbf\xbd";
    CHECK(json_string("plain") == "\"plain\"");
    CHECK(json_string("a\"b\\c") == "\"a\\\"b\\\\c\"");
    CHECK(json_string(std::string("nl\n tab\t nul") + '\0' + " del\x7f") ==
          "\"nl\\u000a tab\\u0009 nul\\u0000 del\\u007f\"");
    // Valid UTF-8 of two, three and four bytes passes as it is.
    CHECK(json_string("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80") == "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    // A Latin-1 name, a stray continuation byte, a truncated sequence at the end, an overlong "/", a
    // UTF-16 surrogate and a code point past U+10FFFF: each bad byte becomes one U+FFFD.
    CHECK(json_string("caf\xe9") == "\"caf" + replacement + "\"");
    CHECK(json_string("\x80x") == "\"" + replacement + "x\"");
    CHECK(json_string("x\xe2\x82") == "\"x" + replacement + replacement + "\"");
    CHECK(json_string("\xc0\xaf") == "\"" + replacement + replacement + "\"");
    CHECK(json_string("\xed\xa0\x80") == "\"" + replacement + replacement + replacement + "\"");
    CHECK(json_string("\xf4\x90\x80\x80") == "\"" + replacement + replacement + replacement + replacement + "\"");
}

TEST_CASE("h-dump --json of a trace whose file name, command and MPI library are not UTF-8 is valid UTF-8")
{
    Trace trace;
    trace.header.ranks = 1;
    trace.header.mpi_library = "lib\xff";
    trace.header.command_line = "./a.out \xfe\x01";
    trace.header.file_names[0] = "out\xe9.dat";
    trace.body.push_back(Node{on_ranks(test::call('s'), all_ranks(1))});
    std::ostringstream out;
    render_json(out, trace);
    const std::string json = out.str();
    CHECK(json.find("\"mpi\": \"lib\xef\xbf\xbd\"") != std::string::npos);
    CHECK(json.find("\"command\": \"./a.out \xef\xbf\xbd\\u0001\"") != std::string::npos);
    CHECK(json.find("\"0\": \"out\xef\xbf\xbd.dat\"") != std::string::npos);
    for (unsigned char c : {0xff, 0xfe, 0xe9}) CHECK(json.find(static_cast<char>(c)) == std::string::npos);
}

TEST_CASE("a loop of 10^15 iterations is counted at once, exactly, also past 2^53")
{
    // Three ranks: 10^9 x 10^9 sends each inside nested loops, then one more send: 3 * 10^18 + 3
    // calls, which a double would round to 3 * 10^18.
    Trace trace;
    trace.header.ranks = 3;
    const RankList everyone = all_ranks(3);
    const Node send = Node{on_ranks(test::call('s', 2), everyone)};
    trace.body.push_back(test::loop(1'000'000'000, {test::loop(1'000'000'000, {send})}));
    trace.body.push_back(Node{on_ranks(test::call('t', 2), everyone)});
    CHECK(call_counts(trace) == "MPI_Send 3000000000000000003\ntotal 3000000000000000003\n");

    std::ostringstream json;
    CHECK(render_call_counts_json(json, trace) == "");
    // Each rank: 10^18 + 1 sends of 2 bytes to its right neighbour.
    CHECK(json.str().find("\"0\": {\"MPI_Send\": {\"calls\": 1000000000000000001, \"bytes\": 2000000000000000002, "
                          "\"peers\": {\"1\": 1000000000000000001}") != std::string::npos);

    const CommunicationMatrix matrix = communication_matrix(trace);
    REQUIRE(matrix.error == "");
    REQUIRE(matrix.pairs.count({2, 0}) == 1);
    CHECK(matrix.pairs.at({2, 0}).messages.to_string() == "1000000000000000001");
    CHECK(matrix.pairs.at({2, 0}).bytes.to_string() == "2000000000000000002");
}

TEST_CASE("a loop visited once for its count keeps the last iteration's cut and the walk's counts")
{
    // e x e x e ... e: a loop of n whose last iteration leaves out x makes n e's and n - 1 x's,
    // counted the same whether the loop is walked (n = 5) or visited once (n = 10^15).
    for (const int64_t n : {int64_t{5}, int64_t{1'000'000'000'000'000}}) {
        Trace trace;
        trace.header.ranks = 2;
        Loop loop{Value(n), {Node{on_ranks(test::call('e'), all_ranks(2))},
                             Node{on_ranks(test::call('x', 8, 0, Op::Recv), all_ranks(2))}}};
        loop.last_leaves_out = 1;
        trace.body.push_back(Node{loop});
        CHECK(call_counts(trace) == "MPI_Recv " + std::to_string(2 * (n - 1)) + "\nMPI_Send " + std::to_string(2 * n) +
                                        "\ntotal " + std::to_string(4 * n - 2) + "\n");
        if (n == 5) CHECK(test::calls_of(trace.body, 1, 2).size() == 9);
    }
}

TEST_CASE("--sequence refuses, at once and writing nothing, a sequence longer than --max-calls")
{
    Trace trace;
    trace.header.ranks = 2;
    trace.body.push_back(test::loop(1'000'000'000'000'000, {Node{on_ranks(test::call('s'), all_ranks(2))}}));
    std::ostringstream out;
    CHECK(render_sequence(out, trace) ==
          "the sequence has 2000000000000000 calls, more than --max-calls " + std::to_string(kDefaultMaxCalls));
    CHECK(out.str().empty());
    // Within the limit it is written; one call more is refused.
    trace.body = {test::loop(3, {Node{on_ranks(test::call('s'), all_ranks(2))}})};
    const std::string lines = sequence(trace, 6);
    CHECK(std::count(lines.begin(), lines.end(), '\n') == 6);
    CHECK(render_sequence(out, trace, 5) == "the sequence has 6 calls, more than --max-calls 5");
    CHECK(out.str().empty());
}

TEST_CASE("a loop that makes communicators is walked, and refused past --max-calls instead of hanging")
{
    Trace trace;
    trace.header.ranks = 2;
    trace.body.push_back(test::loop(1'000'000'000'000'000, {Node{dup(all_ranks(2))}}));
    for (const auto& error : {[&] { std::ostringstream out; return render_call_counts(out, trace, 1000); }(),
                              communication_matrix(trace, 1000).error}) {
        CHECK(error == "more than --max-calls 1000 calls to visit one by one (loops that make or free "
                       "communicators, or whose ranks have more than 64 different counts, are walked iteration "
                       "by iteration)");
    }
    std::ostringstream out;
    CHECK(render_sequence(out, trace, 1000) == "the sequence has more than --max-calls 1000 calls");
    CHECK(out.str().empty());
    // Five iterations are within the limit: 10 calls.
    trace.body = {test::loop(5, {Node{dup(all_ranks(2))}})};
    CHECK(call_counts(trace) == "MPI_Comm_dup 10\ntotal 10\n");
}

TEST_CASE("--sequence writes each rank's calls in order, rank after rank, also past one pass of ranks")
{
    // 300 ranks (more than one pass of temporary files): rank r sends r % 3 + 1 times to r + 1, in a
    // loop, then a barrier.
    constexpr int32_t kRanks = 300;
    Trace trace;
    trace.header.ranks = kRanks;
    for (int64_t n = 1; n <= 3; ++n) {
        std::vector<Rank> ranks;
        for (Rank r = 0; r < kRanks; ++r) {
            if (r % 3 + 1 == n) ranks.push_back(r);
        }
        trace.body.push_back(test::loop(n, {Node{on_ranks(test::call('s', 8 * n), RankList::from_sorted(ranks))}}));
    }
    trace.body.push_back(Node{on_ranks(test::collective('b', 0, Op::Barrier), all_ranks(kRanks))});
    std::string expected;
    for (Rank r = 0; r < kRanks; ++r) {
        const int64_t n = r % 3 + 1;
        for (int64_t i = 0; i < n; ++i) {
            expected += std::to_string(r) + " send MPI_Send peer=" + std::to_string((r + 1) % kRanks) +
                        " tag=0 bytes=" + std::to_string(8 * n) + " comm=0-299\n";
        }
        expected += std::to_string(r) + " collective MPI_Barrier bytes=8 root=0 comm=0-299\n";
    }
    CHECK(sequence(trace) == expected);
}

TEST_CASE("a loop whose count differs between ranks is visited once per count, each rank counted its own")
{
    // Rank 0 loops n times, ranks 1-2 three times, rank 3 not at all; the last iteration leaves out
    // the receive. Small n: the counts must match the full walk's calls rank by rank; n = 10^15:
    // the same arithmetic, at once.
    for (const int64_t n : {int64_t{5}, int64_t{1'000'000'000'000'000}}) {
        Trace trace;
        trace.header.ranks = 4;
        Loop loop{Value(std::vector<PerRankValue>{{n, RankList(0)}, {3, RankList::from_sorted({1, 2})}}),
                  {Node{on_ranks(test::call('e'), all_ranks(3))},
                   Node{on_ranks(test::call('x', 8, 0, Op::Recv), all_ranks(3))}}};
        loop.last_leaves_out = 1;
        trace.body.push_back(Node{loop});
        std::ostringstream json;
        REQUIRE(render_call_counts_json(json, trace, 100) == "");
        for (Rank r = 0; r < 3; ++r) {
            const int64_t iterations = r == 0 ? n : 3;
            const std::string expected = "\"" + std::to_string(r) + "\": {\"MPI_Recv\": {\"calls\": " +
                                         std::to_string(iterations - 1) + ", \"bytes\": " +
                                         std::to_string(8 * (iterations - 1)) + ", ";
            CHECK(json.str().find(expected) != std::string::npos);
            if (n == 5) CHECK(test::calls_of(trace.body, r, 4).size() == size_t(2 * iterations - 1));
        }
        CHECK(json.str().find("\"3\": {\"MPI_") == std::string::npos);  // rank 3 made no call
    }
}

TEST_CASE("loops of 10^15 iterations that hold no call of their ranks cost nothing, in every view")
{
    // Rank 0 loops 5 times around a loop of 10^15 whose only event is rank 1's (a merge never makes
    // this; a damaged trace can); and a loop of 10^15 around an empty loop, around nothing. Each view
    // must finish at once, counting only rank 1's one real call.
    Trace trace;
    trace.header.ranks = 2;
    Loop others{Value(int64_t{1'000'000'000'000'000}), {Node{on_ranks(test::call('o'), RankList(1))}}};
    trace.body.push_back(Node{Loop{Value(std::vector<PerRankValue>{{5, RankList(0)}}), {Node{others}}}});
    trace.body.push_back(test::loop(1'000'000'000'000'000, {test::loop(7, {})}));
    trace.body.push_back(Node{on_ranks(test::call('s'), RankList(1))});
    for (const uint64_t max_calls : {uint64_t{10}, kDefaultMaxCalls}) {
        std::ostringstream calls;
        CHECK(render_call_counts(calls, trace, max_calls) == "");
        CHECK(calls.str() == "MPI_Send 1\ntotal 1\n");
        std::ostringstream lines;
        CHECK(render_sequence(lines, trace, max_calls) == "");
        CHECK(lines.str() == "1 send MPI_Send peer=0 tag=0 bytes=8 comm=0-1\n");
        CHECK(communication_matrix(trace, max_calls).pairs.size() == 1);
    }
}

TEST_CASE("--sequence of a header with 100,000 ranks of which two make calls writes those two, in one pass")
{
    // A pass per 256 ranks of the header would make 100,000 temporary files for nothing.
    Trace trace;
    trace.header.ranks = 100'000;
    trace.body.push_back(Node{on_ranks(test::call('s'), RankList::from_sorted({7, 99'998}))});
    CHECK(sequence(trace) == "7 send MPI_Send peer=8 tag=0 bytes=8 comm=0-99999\n"
                             "99998 send MPI_Send peer=99999 tag=0 bytes=8 comm=0-99999\n");
}

TEST_CASE("counts and byte totals are exact integers within 128 bits, negative ones too")
{
    Amount negative;
    negative.add(-5, 3, 1);
    CHECK(negative.to_string() == "-15");
    // -2^63 bytes (what a damaged trace can hold) times 2^64 - 2 calls: -(2^127 - 2^64).
    Amount extreme;
    extreme.add(INT64_MIN, UINT64_MAX - 1, 1);
    CHECK(extreme.to_string() == "-170141183460469231713240559642174554112");
    // Three sums of 2^64 - 2 calls each: past 64 bits, still exact.
    Amount calls;
    for (int i = 0; i < 3; ++i) calls.add(1, UINT64_MAX - 1, 1);
    CHECK(calls.to_string() == "55340232221128654842");
    // A histogram's mean is never exact: the total prints with two decimals where it is not whole.
    Amount expected;
    expected.add(1, 3, 1);
    expected.add_mean(0.5, 1, 1);
    CHECK(expected.to_string() == "3.50");
}
