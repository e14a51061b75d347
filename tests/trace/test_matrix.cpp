// h-dump --matrix: who sent how much to whom, checked against traces built by hand whose messages
// are known call by call.
#include "trace/render.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <sstream>
#include <string>

using namespace htrace;

namespace {

RankList ranks(std::vector<Rank> sorted) { return RankList::from_sorted(sorted); }

Event on_ranks(Event e, const RankList& participants)
{
    e.ranks = participants;
    return e;
}

Event receive(char site, Rank first, Rank last)
{
    Event e = test::call(site, 32, 0, Op::Recv);
    e.params = {{Role::peer, Value(int64_t{3})}, {Role::tag, Value(int64_t{0})}, {Role::recv_bytes, Value(int64_t{32})},
                {Role::comm, Value(int64_t{0})}};
    std::vector<Rank> all;
    for (Rank r = first; r <= last; ++r) all.push_back(r);
    e.ranks = ranks(all);
    return e;
}

// (sender, receiver) -> (messages, bytes), the matrix's pairs in a form a check can compare whole.
std::map<std::pair<Rank, Rank>, std::pair<double, double>> pairs_of(const Trace& trace)
{
    std::map<std::pair<Rank, Rank>, std::pair<double, double>> out;
    for (const auto& [pair, traffic] : communication_matrix(trace).pairs) {
        out[pair] = {traffic.messages.approximate(), traffic.bytes.approximate()};
    }
    return out;
}

std::string matrix_text(const Trace& trace)
{
    std::ostringstream out;
    CHECK(render_matrix(out, trace) == "");
    return out.str();
}

std::string matrix_json(const Trace& trace)
{
    std::ostringstream out;
    CHECK(render_matrix_json(out, trace) == "");
    return out.str();
}

}  // namespace

TEST_CASE("a ring's matrix has each rank send to its right neighbour only, wrap-around included")
{
    // Four ranks, 10 laps: every rank sends 32 bytes to (rank + 1) mod 4 and receives from the left,
    // then an Allreduce, which is not pairwise and must not show.
    Trace trace;
    trace.header.ranks = 4;
    const RankList everyone = ranks({0, 1, 2, 3});
    Event send = on_ranks(test::call('s', 32), everyone);
    trace.body.push_back(test::loop(10, {Node{send}, Node{receive('r', 0, 3)}}));
    trace.body.push_back(Node{on_ranks(test::collective('a', 0, Op::Allreduce), everyone)});

    const std::map<std::pair<Rank, Rank>, std::pair<double, double>> expected = {
        {{0, 1}, {10, 320}}, {{1, 2}, {10, 320}}, {{2, 3}, {10, 320}}, {{3, 0}, {10, 320}}};
    INFO(matrix_text(trace));
    CHECK(pairs_of(trace) == expected);
    CHECK(communication_matrix(trace).unresolved.messages.approximate() == 0);
    CHECK(matrix_text(trace) ==
          "# point-to-point traffic between world ranks (collectives are not pairwise: left out)\n"
          "# sender receiver messages bytes\n"
          "0 1 10 320\n1 2 10 320\n2 3 10 320\n3 0 10 320\n"
          "total 40 1280\n");
}

TEST_CASE("peers on a split communicator become world ranks in the new communicator's rank order")
{
    // Six ranks split by parity; the odd ones order themselves backwards (key), so their comm ranks
    // 0, 1, 2 are world ranks 5, 3, 1. A send to comm rank + 1 then goes 0->2->4->0 and 5->3->1->5.
    Trace trace;
    trace.header.ranks = 6;
    const RankList everyone = ranks({0, 1, 2, 3, 4, 5});
    Event split;
    split.op = Op::Comm_split;
    split.signature = 'c';
    split.ranks = everyone;
    split.params = {{Role::comm, Value(int64_t{0})},
                    {Role::new_comm, Value(int64_t{2})},
                    {Role::color, Value(std::vector<PerRankValue>{{0, ranks({0, 2, 4})}, {5, ranks({1, 3, 5})}})},
                    {Role::key, Value(std::vector<PerRankValue>{{0, ranks({0}), 0}, {1, ranks({2})}, {2, ranks({4})},
                                                                {2, ranks({1})}, {1, ranks({3})}, {0, ranks({5})}})}};
    trace.body.push_back(Node{split});
    Event send = on_ranks(test::call('s', 100), everyone);
    send.params[3].value = Value(int64_t{2});
    trace.body.push_back(Node{send});

    const std::map<std::pair<Rank, Rank>, std::pair<double, double>> expected = {
        {{0, 2}, {1, 100}}, {{2, 4}, {1, 100}}, {{4, 0}, {1, 100}},
        {{5, 3}, {1, 100}}, {{3, 1}, {1, 100}}, {{1, 5}, {1, 100}}};
    INFO(matrix_text(trace));
    CHECK(pairs_of(trace) == expected);
}

TEST_CASE("Sendrecv's send side and started persistent sends count; receives, PROC_NULL and unknown "
          "communicators do not")
{
    Trace trace;
    trace.header.ranks = 3;
    // Sendrecv on every rank to rank + 2 (= rank - 1 mod 3), bytes per rank: 8, 16, 24.
    Event sendrecv = on_ranks(test::call('x', 0, 0, Op::Sendrecv), ranks({0, 1, 2}));
    sendrecv.params = {{Role::peer, Value(int64_t{2})},
                       {Role::tag, Value(int64_t{0})},
                       {Role::bytes, Value(std::vector<PerRankValue>{{8, ranks({0, 1, 2}), 8}})},
                       {Role::source, Value(int64_t{1})},
                       {Role::recv_bytes, Value(int64_t{1000})},
                       {Role::comm, Value(int64_t{0})}};
    trace.body.push_back(Node{sendrecv});
    // A started persistent send from rank 0 to rank 1, three times; the started receive on rank 1 moves nothing.
    Event start_send = on_ranks(test::call('p', 64, 0, Op::Start), ranks({0}));
    Event start_receive = on_ranks(test::call('q', 0, 0, Op::Start), ranks({1}));
    start_receive.params = {{Role::peer, Value(int64_t{2})}, {Role::tag, Value(int64_t{0})},
                            {Role::recv_bytes, Value(int64_t{64})}, {Role::comm, Value(int64_t{0})}};
    trace.body.push_back(test::loop(3, {Node{start_send}, Node{start_receive}}));
    // A send to MPI_PROC_NULL, and one on a communicator the trace never made.
    Event nowhere = on_ranks(test::call('n', 500), ranks({2}));
    nowhere.params[0].value = Value(kProcNull);
    trace.body.push_back(Node{nowhere});
    Event unknown = on_ranks(test::call('u', 7), ranks({2}));
    unknown.params[3].value = Value(int64_t{9});
    trace.body.push_back(Node{unknown});

    const std::map<std::pair<Rank, Rank>, std::pair<double, double>> expected = {
        {{0, 2}, {1, 8}}, {{1, 0}, {1, 16}}, {{2, 1}, {1, 24}}, {{0, 1}, {3, 192}}};
    INFO(matrix_text(trace));
    CHECK(pairs_of(trace) == expected);
    const CommunicationMatrix matrix = communication_matrix(trace);
    CHECK(matrix.unresolved.messages.to_string() == "1");
    CHECK(matrix.unresolved.bytes.to_string() == "7");
    CHECK(matrix_json(trace) ==
          "{\"ranks\": 3, \"pairs\": [{\"from\": 0, \"to\": 1, \"messages\": 3, \"bytes\": 192}, "
          "{\"from\": 0, \"to\": 2, \"messages\": 1, \"bytes\": 8}, {\"from\": 1, \"to\": 0, \"messages\": 1, "
          "\"bytes\": 16}, {\"from\": 2, \"to\": 1, \"messages\": 1, \"bytes\": 24}], \"total\": {\"messages\": 6, "
          "\"bytes\": 240}, \"unresolved\": {\"messages\": 1, \"bytes\": 7}}\n");
}

TEST_CASE("histogram sizes and loop counts count by their means")
{
    // Rank 0 sends to rank 1 in a loop that ran 3 or 5 times (mean 4), 100 or 300 bytes (mean 200).
    Trace trace;
    trace.header.ranks = 2;
    const HistogramConfig config{8, 64};
    Histogram counts(config);
    counts.add(3, 0);
    counts.add(5, 0);
    Histogram sizes(config);
    sizes.add(100, 0);
    sizes.add(300, 0);
    Event send = on_ranks(test::call('s'), ranks({0}));
    send.params[2].value = Value(sizes);
    trace.body.push_back(Node{Loop{Value(counts), {Node{send}}}});

    INFO(matrix_text(trace));
    const auto pairs = pairs_of(trace);
    REQUIRE(pairs.size() == 1);
    REQUIRE(pairs.count({0, 1}) == 1);
    CHECK(pairs.at({0, 1}).first == doctest::Approx(4));
    CHECK(pairs.at({0, 1}).second == doctest::Approx(800));
}
