#include "merge/loop_folding.hpp"
#include "merge/precision.hpp"
#include "merge/rank_merge.hpp"
#include "trace/completion_set.hpp"
#include "trace/trace_file.hpp"

#include "support/merge_tree.hpp"
#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

using namespace htrace;
using htrace::test::call;
using htrace::test::calls_of;

namespace {

MergeRule at(int precision) { return MergeRule{precision, HistogramConfig{}}; }

// All the histograms' values of one role in a sequence, with their counts (bins must be exact).
std::map<int64_t, uint64_t> histogram_counts(const Value& v)
{
    std::map<int64_t, uint64_t> out;
    REQUIRE(v.is_histogram());
    for (const auto& bin : v.histogram().bins()) {
        REQUIRE(bin.min == bin.max);
        out[bin.min] += bin.count;
    }
    return out;
}

// Timesteps of a convergence loop: an inner loop of `inner(t)` iterations of a, b, then c.
Sequence convergence(int timesteps, int (*inner)(int), const MergeRule& rule, Rank rank = 0)
{
    LoopFolder folder(rule, rank);
    for (int t = 0; t < timesteps; ++t) {
        for (int i = 0; i < inner(t); ++i) {
            folder.append(call('a'));
            folder.append(call('b'));
        }
        folder.append(call('c'));
    }
    return test::with_rank(folder.finish(), rank);
}

int about_forty(int t) { return 39 + ((t * t * 13 + t * 7) % 17 > 8 ? 1 : 0); }  // 39 or 40: within 5 %
int far_apart(int t) { return t % 2 ? 40 : 30; }  // 25 % apart

}  // namespace

TEST_CASE("the precision rule compares the widest pair of values")
{
    const Role bytes = Role::bytes;
    CHECK(may_merge(Value(int64_t{80}), Value(int64_t{84}), bytes, at(95)));
    CHECK_FALSE(may_merge(Value(int64_t{80}), Value(int64_t{90}), bytes, at(95)));
    CHECK(may_merge(Value(int64_t{80}), Value(int64_t{90}), bytes, at(85)));
    CHECK_FALSE(may_merge(Value(int64_t{80}), Value(int64_t{81}), bytes, at(100)));
    CHECK(may_merge(Value(int64_t{80}), Value(int64_t{80}), bytes, at(100)));
    CHECK(may_merge(Value(int64_t{1}), Value(int64_t{1'000'000}), bytes, at(0)));
    CHECK(may_merge(Value(int64_t{kProcNull}), Value(int64_t{1}), Role::peer, at(0)));
    CHECK_FALSE(may_merge(Value(int64_t{kProcNull}), Value(int64_t{1}), Role::peer, at(50)));
    // Communicators and roots never become histograms.
    CHECK_FALSE(may_merge(Value(int64_t{2}), Value(int64_t{3}), Role::comm, at(0)));
    CHECK_FALSE(may_merge(Value(int64_t{0}), Value(int64_t{1}), Role::root, at(0)));
    // A histogram's whole range counts, not only its mean.
    Histogram h;
    h.add(80, 0);
    h.add(84, 0);
    CHECK(may_merge(Value(h), Value(int64_t{83}), bytes, at(95)));
    CHECK_FALSE(may_merge(Value(h), Value(int64_t{88}), bytes, at(95)));
}

TEST_CASE("inner loops whose counts differ within the precision fold into one loop with a count histogram")
{
    const Sequence lossless = convergence(50, about_forty, at(100));
    const Sequence merged = convergence(50, about_forty, at(95));
    CHECK(test::node_count(lossless) > 3 * test::node_count(merged));
    REQUIRE(merged.size() == 1);
    const Loop& timesteps = merged[0].loop();
    CHECK(timesteps.iterations == Value(int64_t{50}));
    REQUIRE(timesteps.body[0].is_loop());
    std::map<int64_t, uint64_t> truth;
    uint64_t calls_of_a = 0;
    for (int t = 0; t < 50; ++t) {
        truth[about_forty(t)] += 1;
        calls_of_a += static_cast<uint64_t>(about_forty(t));
    }
    CHECK(histogram_counts(timesteps.body[0].loop().iterations) == truth);
    // The calls inside are what the program made.
    CHECK(timesteps.body[0].loop().body[0].event().compute.count == calls_of_a);
}

TEST_CASE("counts too far apart for the precision do not merge, and then the trace stays lossless")
{
    const Sequence seq = convergence(20, far_apart, at(95));
    std::vector<std::string> expected;
    for (int t = 0; t < 20; ++t) {
        for (int i = 0; i < far_apart(t); ++i) {
            expected.push_back("a:8");
            expected.push_back("b:8");
        }
        expected.push_back("c:8");
    }
    CHECK(calls_of(seq, 0, 1) == expected);
    CHECK(convergence(20, far_apart, at(0)).size() == 1);
}

TEST_CASE("message sizes that drift within the precision merge into one event with a size histogram")
{
    LoopFolder folder(at(90), 0);
    std::map<int64_t, uint64_t> sent;
    for (int t = 0; t < 40; ++t) {
        const int64_t bytes = 1000 + 10 * (t % 8);  // drifts by up to 7 %
        folder.append(call('s', bytes));
        folder.append(call('r'));
        sent[bytes] += 1;
    }
    const Sequence seq = test::with_rank(folder.finish(), 0);
    REQUIRE(seq.size() == 1);
    const Value* bytes = seq[0].loop().body[0].event().find(Role::bytes);
    REQUIRE(bytes != nullptr);
    CHECK(histogram_counts(*bytes) == sent);
}

TEST_CASE("land and sea ranks merge into one event whose histogram holds both sizes at precision 0")
{
    auto rank_trace = [](Rank rank, const MergeRule& rule) {
        LoopFolder folder(rule, rank);
        for (int t = 0; t < 10; ++t) folder.append(call('x', rank < 4 ? 80 : 90));
        return test::with_rank(folder.finish(), rank);
    };
    for (int precision : {0, 95, 100}) {
        CAPTURE(precision);
        Sequence merged = rank_trace(0, at(precision));
        for (Rank r = 1; r < 8; ++r) merged = merge_ranks(std::move(merged), rank_trace(r, at(precision)), at(precision));
        REQUIRE(merged.size() == 1);
        const Event& e = merged[0].loop().body[0].event();
        CHECK(e.ranks.to_string() == "0-7");
        const Value* bytes = e.find(Role::bytes);
        if (precision == 0) {
            CHECK(histogram_counts(*bytes) == std::map<int64_t, uint64_t>{{80, 40}, {90, 40}});
        } else {
            REQUIRE(bytes->is_per_rank());
            CHECK(bytes->value_for(0) == 80);
            CHECK(bytes->value_for(7) == 90);
        }
    }
}

TEST_CASE("the paper's 8-rank example merges into one Bcast with every rank's sends before it")
{
    // Ranks 0-3: two rounds of Irecv/Send/Wait then Bcast; ranks 4-7: one round then Bcast.
    auto rank_trace = [](Rank rank) {
        LoopFolder folder(at(100), rank);
        const int rounds = rank < 4 ? 2 : 1;
        for (int i = 0; i < rounds; ++i) {
            folder.append(call('i', 8, rank, Op::Irecv));
            folder.append(call('s', 8, rank, Op::Send));
            folder.append(call('w', 8, rank, Op::Wait));
        }
        folder.append(test::collective('B', rank));
        return test::with_rank(folder.finish(), rank);
    };
    Sequence merged = rank_trace(0);
    for (Rank r = 1; r < 8; ++r) merged = merge_ranks(std::move(merged), rank_trace(r), at(100));
    int bcasts = 0;
    for (const auto& node : merged) {
        if (node.is_event() && node.event().op == Op::Bcast) {
            ++bcasts;
            CHECK(node.event().ranks.to_string() == "0-7");
        }
    }
    CHECK(bcasts == 1);
    for (Rank r = 0; r < 8; ++r) {
        CAPTURE(r);
        const auto calls = calls_of(merged, r, 8);
        const std::vector<std::string> one_round{"i:8", "s:8", "w:8"};
        std::vector<std::string> expected;
        for (int i = 0; i < (r < 4 ? 2 : 1); ++i) expected.insert(expected.end(), one_round.begin(), one_round.end());
        expected.push_back("B:8");
        CHECK(calls == expected);
    }
}

namespace {

// A send to `peer` (relative), `times` times in a loop, then a barrier; folded on rank `rank`.
Sequence exchange(Rank rank, int64_t peer, int times, const MergeRule& rule)
{
    LoopFolder folder(rule, rank);
    for (int t = 0; t < times; ++t) {
        Event send = call('s');
        send.params[0].value = Value(peer);
        folder.append(std::move(send));
    }
    folder.append(test::collective('b', rank, Op::Barrier));
    return test::with_rank(folder.finish(), rank);
}

const Event& first_send(const Sequence& seq)
{
    REQUIRE(!seq.empty());
    const Node& node = seq[0];
    if (node.is_event()) return node.event();
    REQUIRE(!node.loop().body.empty());
    REQUIRE(node.loop().body[0].is_event());
    return node.loop().body[0].event();
}

}  // namespace

TEST_CASE("at precision 0 peers stay per rank where that takes no more bytes than their histogram")
{
    // A pairwise exchange: even ranks send to the next, odd ones to the one before. Drawn from a
    // histogram of {+1, -1}, replay would pair ranks at random.
    size_t bytes_at_4 = 0;
    for (int ranks : {4, 16, 64}) {
        CAPTURE(ranks);
        std::vector<Sequence> traces;
        for (Rank r = 0; r < ranks; ++r) traces.push_back(exchange(r, r % 2 == 0 ? 1 : ranks - 1, 10, at(0)));
        const Sequence merged = test::merge_tree(std::move(traces), at(0));
        const Value& peer = *first_send(merged).find(Role::peer);
        REQUIRE(peer.is_per_rank());
        for (Rank r = 0; r < ranks; ++r) CHECK(peer.value_for(r) == (r % 2 == 0 ? 1 : ranks - 1));
        // Two entries of strided ranks: the same bytes at any rank count.
        if (ranks == 4) bytes_at_4 = encoded_size(peer);
        CHECK(encoded_size(peer) == bytes_at_4);
    }
    // Peers without a pattern in the rank: kept per rank they would cost an entry per run of ranks,
    // so they become a histogram, which costs the same at any rank count.
    std::mt19937 random(7);
    std::vector<Sequence> traces;
    for (Rank r = 0; r < 64; ++r) traces.push_back(exchange(r, 1 + static_cast<int64_t>(random() % 2), 10, at(0)));
    const Sequence merged = test::merge_tree(std::move(traces), at(0));
    const Value& peer = *first_send(merged).find(Role::peer);
    REQUIRE(peer.is_histogram());
    CHECK(peer.histogram().count() == 640);
    // Other values follow the rule as written: land and sea sizes stay a histogram (test above).
}

TEST_CASE("at precision 0 a loop only some ranks run keeps its count per rank where that is smaller")
{
    // Master/worker: rank 0 sends 15 tasks, the others none. {15 on rank 0, 0 elsewhere} replays the
    // master's loop on the master; a histogram {0 x 15, 15 x 1} would let any rank draw it.
    auto rank_trace = [](Rank rank) {
        LoopFolder folder(at(0), rank);
        if (rank == 0) {
            for (int t = 0; t < 15; ++t) folder.append(call('m', 8 + t));
        }
        folder.append(test::collective('b', rank, Op::Barrier));
        return test::with_rank(folder.finish(), rank);
    };
    std::vector<Sequence> traces;
    for (Rank r = 0; r < 16; ++r) traces.push_back(rank_trace(r));
    const Sequence merged = test::merge_tree(std::move(traces), at(0));
    REQUIRE(merged.size() == 2);
    REQUIRE(merged[0].is_loop());
    const Value& count = merged[0].loop().iterations;
    REQUIRE(count.is_per_rank());
    CHECK(count.value_for(0) == 15);
    for (Rank r = 1; r < 16; ++r) CHECK(count.value_for(r) == 0);
    CHECK(calls_of(merged, 0, 16).size() == 16);
    CHECK(calls_of(merged, 5, 16).size() == 1);
}

TEST_CASE("peers kept per rank become a histogram where a loop around them is shared with a drawn count")
{
    // Ranks 0-31 exchange 3 to 9 times each, ranks 32-63 never: kept per rank, those counts would take
    // more bytes than their histogram, so the loop becomes every rank's with a drawn count, and its
    // peers must then be drawn too (a rank of 32-63 that draws an iteration has no peer of its own).
    std::vector<Sequence> traces;
    for (Rank r = 0; r < 64; ++r) {
        const int times = r < 32 ? 3 + (r * 5 + 1) % 7 : 0;
        traces.push_back(exchange(r, r % 2 == 0 ? 1 : 63, times, at(0)));
    }
    const Sequence merged = test::merge_tree(std::move(traces), at(0));
    REQUIRE(merged[0].is_loop());
    const Loop& loop = merged[0].loop();
    REQUIRE(loop.iterations.is_histogram());
    const Value& peer = *loop.body[0].event().find(Role::peer);
    CHECK(peer.is_histogram());
    CHECK(loop.body[0].event().ranks.to_string() == "0-63");
}

TEST_CASE("ranks whose values vary alike from iteration to iteration merge into a histogram alike on every rank")
{
    // Each rank sends 12 messages whose sizes cycle through a multigrid's levels. Where every rank
    // cycles through the same sizes, the merged size histogram is alike on every rank, and so is
    // the count of an inner loop that every rank runs the same number of times per iteration. Where
    // ranks 4-7 have other sizes, or each rank one size of its own (land and sea), it is not.
    const auto rank_trace = [](Rank rank, const std::vector<int64_t>& sizes, int (*inner)(int)) {
        LoopFolder folder(at(0), rank);
        for (int t = 0; t < 12; ++t) {
            for (int i = 0; i < inner(t); ++i) folder.append(call('a'));
            folder.append(call('x', sizes[static_cast<size_t>(t) % sizes.size()]));
        }
        return test::with_rank(folder.finish(), rank);
    };
    const auto merged_of = [&](const std::vector<int64_t>& low, const std::vector<int64_t>& high, int (*inner)(int)) {
        std::vector<Sequence> traces;
        for (Rank r = 0; r < 8; ++r) traces.push_back(rank_trace(r, r < 4 ? low : high, inner));
        Sequence merged = test::merge_tree(std::move(traces), at(0));
        REQUIRE(merged.size() == 1);
        return merged[0].loop();
    };
    const auto two_or_three = [](int t) { return 2 + t % 2; };
    {
        const Loop alike = merged_of({32, 128, 512}, {32, 128, 512}, two_or_three);
        REQUIRE(alike.body.size() == 2);
        CHECK(alike.body[0].loop().iterations.is_histogram());
        CHECK(alike.body[0].loop().iterations.alike_on_every_rank());
        const Value* sizes = alike.body[1].event().find(Role::bytes);
        REQUIRE(sizes->is_histogram());
        CHECK(histogram_counts(*sizes) == std::map<int64_t, uint64_t>{{32, 32}, {128, 32}, {512, 32}});
        CHECK(sizes->alike_on_every_rank());
    }
    {
        const Loop differ = merged_of({32, 128, 512}, {32, 2048, 8192}, two_or_three);
        const Value* sizes = differ.body[1].event().find(Role::bytes);
        REQUIRE(sizes->is_histogram());
        CHECK_FALSE(sizes->alike_on_every_rank());
        CHECK(differ.body[0].loop().iterations.alike_on_every_rank());  // the counts still agree
    }
    {
        const Loop land_and_sea = merged_of({80}, {90}, two_or_three);
        const Value* sizes = land_and_sea.body[1].event().find(Role::bytes);
        REQUIRE(sizes->is_histogram());
        CHECK_FALSE(sizes->alike_on_every_rank());
    }
}

TEST_CASE("completed sets that differ merge into how many requests each call completed, the oldest pending")
{
    // A Waitsome loop whose calls completed positions {0, 1}, {2}, {0, 1, 2} and again {2}: their
    // encoded values are not near each other, so the histogram keeps only the counts.
    const std::vector<std::vector<uint32_t>> sets{{0, 1}, {2}, {0, 1, 2}, {2}};
    LoopFolder folder(at(0), 0);
    for (int step = 0; step < 3; ++step) {
        for (const auto& set : sets) {
            Event waitsome = call('w');
            waitsome.op = Op::Waitsome;
            waitsome.params = {{Role::completed_set, Value(encode_completed_set(set).front())}};
            folder.append(std::move(waitsome));
        }
        folder.append(call('c'));  // what differs between steps, so that iterations merge under the rule
    }
    const Sequence folded = folder.finish();
    std::map<int64_t, uint64_t> merged;
    const std::function<void(const Sequence&)> visit = [&](const Sequence& seq) {
        for (const auto& node : seq) {
            if (node.is_loop()) {
                visit(node.loop().body);
            } else if (node.event().op == Op::Waitsome) {
                const Value& set = node.event().params.front().value;
                for (const auto& [value, count] : histogram_counts(set)) merged[value] += count;
            }
        }
    };
    visit(folded);
    CHECK(merged == std::map<int64_t, uint64_t>{{-3, 3}, {-2, 3}, {-1, 6}});
    // Within one event merged with another directly as well.
    const Value a(encode_completed_set(std::vector<uint32_t>{4}).front());
    const Value b(encode_completed_set(std::vector<uint32_t>{1, 5}).front());
    CHECK(histogram_counts(merge_values({a, 1, 0}, {b, 1, 0}, Role::completed_set, at(0))) ==
          std::map<int64_t, uint64_t>{{-2, 1}, {-1, 1}});
    // Equal sets stay exact: lossless traces keep which requests completed.
    CHECK(merge_values({a, 1, 0}, {a, 1, 0}, Role::completed_set, at(0)) == a);
}
