#include "merge/loop_folding.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>

using namespace htrace;
using htrace::test::call;
using htrace::test::calls_of;

namespace {

// Feeds the calls of `pattern`, a string of call-site letters, to a folder.
Sequence fold(const std::string& pattern, std::vector<std::string>* fed = nullptr)
{
    LoopFolder folder;
    for (char c : pattern) {
        folder.append(call(c));
        if (fed) fed->push_back(std::string(1, c) + ":8");
    }
    return test::with_rank(folder.finish(), 0);
}

std::string repeat(const std::string& s, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

TEST_CASE("a call repeated folds into one loop that counts it")
{
    const Sequence seq = fold(repeat("a", 1000));
    REQUIRE(seq.size() == 1);
    REQUIRE(seq[0].is_loop());
    CHECK(seq[0].loop().iterations == Value(int64_t{1000}));
    REQUIRE(seq[0].loop().body.size() == 1);
    CHECK(seq[0].loop().body[0].event().compute.count == 1000);
}

TEST_CASE("nested loops fold into a loop nest: 10 x (100 x abc, d)")
{
    std::vector<std::string> fed;
    const Sequence seq = fold(repeat(repeat("abc", 100) + "d", 10), &fed);
    REQUIRE(seq.size() == 1);
    const Loop& outer = seq[0].loop();
    CHECK(outer.iterations == Value(int64_t{10}));
    REQUIRE(outer.body.size() == 2);
    REQUIRE(outer.body[0].is_loop());
    CHECK(outer.body[0].loop().iterations == Value(int64_t{100}));
    CHECK(outer.body[0].loop().body.size() == 3);
    CHECK(outer.body[1].event().signature == 'd');
    CHECK(calls_of(seq, 0, 1) == fed);
    // Every call's time is kept, also where the folder checked it in place against a nested body.
    CHECK(outer.body[0].loop().body[0].event().compute.count == 1000);
    CHECK(outer.body[1].event().compute.count == 10);
}

TEST_CASE("an inner loop that runs once more in the outer loop's last iteration rejoins it")
{
    // A convergence loop's steps (abc until converged, then d) ran these times (tests/mpi's
    // convergence, ranks 134 and 135 of 256): folding on the fly makes (d (41 abc, d) x 2, 39 abc) x 2
    // of the last steps and cannot take the 40th abc of the last step into it. No call is left
    // outside a loop, and the last step is one loop of 40.
    std::vector<std::string> fed;
    std::string pattern;
    for (int count : {42, 38, 39, 42, 41, 41, 39, 41, 41, 40}) pattern += repeat("abc", count) + "d";
    const Sequence seq = fold(pattern, &fed);
    CHECK(calls_of(seq, 0, 1) == fed);
    for (const Node& node : seq) {
        if (node.is_event()) CHECK(node.event().signature == 'd');
    }
    REQUIRE(seq.size() >= 2);
    const Node& last_step = seq[seq.size() - 2];
    REQUIRE(last_step.is_loop());
    CHECK(last_step.loop().iterations == Value(int64_t{40}));
    CHECK(last_step.loop().body.at(0).event().compute.count == 40);
    double calls = 0;
    for (const auto& [site, count] : test::expected_calls(seq)) calls += count;
    CHECK(calls == doctest::Approx(fed.size()));
}

namespace {

// The folded steps of a convergence loop (abc until converged, then d): for each step, the runs of
// abc it was folded into, in order (a loop of abc counts its iterations; a loose abc counts 1).
std::vector<std::vector<int64_t>> runs_by_step(const Sequence& seq)
{
    std::vector<std::vector<int64_t>> steps(1);
    const auto walk = [&](const auto& self, const Sequence& nodes) -> void {
        for (const Node& node : nodes) {
            if (node.is_event()) {
                if (node.event().signature == 'd') steps.emplace_back();
                if (node.event().signature == 'a') steps.back().push_back(1);
                continue;
            }
            const Loop& loop = node.loop();
            if (loop.body.size() == 3 && loop.body[0].is_event() && loop.body[0].event().signature == 'a') {
                steps.back().push_back(loop.iterations.exact());
                continue;
            }
            for (int64_t i = 0; i < loop.iterations.exact(); ++i) self(self, loop.body);
        }
    };
    walk(walk, seq);
    steps.pop_back();  // after the last d
    return steps;
}

}  // namespace

TEST_CASE("each step of a convergence loop is one inner loop of the step's count, whatever the steps before")
{
    // Ranks 1412 and 1413 of convergence at 4,096 ranks ran the first of these (their trace held the
    // ninth step as loops of 38 and 3): re-folding a partial iteration call by call, the folder
    // passed through an inner loop of 38, the count of an earlier step, and folded the two steps
    // into one loop there. The others: random steps of 38 to 42 iterations, as the program's are.
    std::vector<std::vector<int>> histories = {{38, 38, 40, 39, 39, 38, 39, 39, 41, 39}};
    std::mt19937 rng(29);
    std::uniform_int_distribution<int> iterations(38, 42);
    for (int i = 0; i < 2000; ++i) {
        std::vector<int>& steps = histories.emplace_back();
        for (int step = 0; step < 10; ++step) steps.push_back(iterations(rng));
    }
    for (const std::vector<int>& steps : histories) {
        std::string pattern;
        for (int count : steps) pattern += repeat("abc", count) + "d";
        std::vector<std::vector<int64_t>> expected;
        for (int count : steps) expected.push_back({count});
        CAPTURE(pattern.size());
        REQUIRE(runs_by_step(fold(pattern)) == expected);
    }
}

TEST_CASE("a loop whose body is itself a loop folds three deep")
{
    std::vector<std::string> fed;
    const Sequence seq = fold(repeat(repeat(repeat("a", 4), 3) + "b", 5), &fed);
    CHECK(calls_of(seq, 0, 1) == fed);
    CHECK(test::node_count(seq) <= 4);
}

TEST_CASE("calls that differ in a parameter do not fold: the trace stays lossless")
{
    LoopFolder folder;
    for (int i = 0; i < 6; ++i) folder.append(call('a', i % 2 == 0 ? 8 : 16));
    const Sequence seq = test::with_rank(folder.finish(), 0);
    CHECK(calls_of(seq, 0, 1) == std::vector<std::string>{"a:8", "a:16", "a:8", "a:16", "a:8", "a:16"});
    REQUIRE(seq.size() == 1);
    CHECK(seq[0].loop().iterations == Value(int64_t{3}));
}

TEST_CASE("a 10-million-iteration loop costs the same memory as a 10-iteration one")
{
    LoopFolder small;
    LoopFolder large;
    for (int i = 0; i < 10; ++i) {
        small.append(call('a'));
        small.append(call('b'));
    }
    const Event site_a = call('a');
    const Event site_b = call('b');
    for (int i = 0; i < 10'000'000; ++i) {
        large.append(site_a);
        large.append(site_b);
    }
    CHECK(large.top_level_size() == small.top_level_size());
    const Sequence a = small.finish();
    const Sequence b = large.finish();
    CHECK(test::node_count(a) == test::node_count(b));
    CHECK(b[0].loop().iterations == Value(int64_t{10'000'000}));
}

namespace {

// A loop body of `length` calls from `sites` call sites with a few message sizes, framed by two call
// sites of its own (`first`, `last`) so that no repetition can straddle two iterations.
std::vector<Event> long_body(size_t length, int sites, std::mt19937& rng, char first = '#', char last = '$')
{
    std::vector<Event> body{call(first)};
    std::uniform_int_distribution<int> site(0, sites - 1);
    std::uniform_int_distribution<int> size(1, 4);
    while (body.size() + 1 < length) body.push_back(call(static_cast<char>('A' + site(rng)), 8 * size(rng)));
    body.push_back(call(last));
    return body;
}

std::vector<std::string> feed(LoopFolder& folder, const std::vector<Event>& calls)
{
    std::vector<std::string> fed;
    for (const Event& e : calls) {
        folder.append(e);
        fed.push_back(std::string(1, static_cast<char>(e.signature)) + ":" + std::to_string(e.params[2].value.exact()));
    }
    return fed;
}

}  // namespace

TEST_CASE("a loop body of thousands of calls, each call site many times in it, folds into one loop")
{
    std::mt19937 rng(9);
    for (size_t length : {300, 2'000, 6'000}) {
        CAPTURE(length);
        const std::vector<Event> body = long_body(length, 40, rng);
        LoopFolder folder;
        std::vector<std::string> fed;
        for (int i = 0; i < 20; ++i) {
            const auto more = feed(folder, body);
            fed.insert(fed.end(), more.begin(), more.end());
        }
        const Sequence seq = test::with_rank(folder.finish(), 0);
        REQUIRE(seq.size() == 1);
        REQUIRE(seq[0].is_loop());
        CHECK(seq[0].loop().iterations == Value(int64_t{20}));
        CHECK(calls_of(seq, 0, 1) == fed);
    }
}

TEST_CASE("long loop bodies nest: 4 x (a 700-call body 3 times, then a 500-call tail)")
{
    std::mt19937 rng(11);
    const std::vector<Event> inner = long_body(700, 30, rng);
    const std::vector<Event> tail = long_body(500, 30, rng, '%', '&');
    LoopFolder folder;
    std::vector<std::string> fed;
    for (int outer = 0; outer < 4; ++outer) {
        for (int i = 0; i < 3; ++i) {
            const auto more = feed(folder, inner);
            fed.insert(fed.end(), more.begin(), more.end());
        }
        const auto more = feed(folder, tail);
        fed.insert(fed.end(), more.begin(), more.end());
    }
    const Sequence seq = test::with_rank(folder.finish(), 0);
    REQUIRE(seq.size() == 1);
    const Loop& outer = seq[0].loop();
    CHECK(outer.iterations == Value(int64_t{4}));
    REQUIRE(outer.body.front().is_loop());
    CHECK(outer.body.front().loop().iterations == Value(int64_t{3}));
    CHECK(calls_of(seq, 0, 1) == fed);
}

TEST_CASE("a long loop body whose sizes vary a little between iterations folds below precision 100")
{
    std::mt19937 rng(5);
    const std::vector<Event> body = long_body(1'500, 40, rng);
    LoopFolder folder(MergeRule{90, {}}, 0);
    for (int i = 0; i < 10; ++i) {
        for (const Event& e : body) {
            Event jittered = e;
            jittered.params[2].value = Value(e.params[2].value.exact() * 100 + i);  // within 90%
            folder.append(jittered);
        }
    }
    const Sequence seq = test::with_rank(folder.finish(), 0);
    REQUIRE(seq.size() == 1);
    CHECK(seq[0].loop().iterations == Value(int64_t{10}));
    CHECK(calls_of(seq, 0, 1).size() == 10 * body.size());
}

TEST_CASE("whatever the calls, unfolding the folded trace gives them back in order")
{
    // Random programs of nested loops with irregular tails, as a property test of folding.
    std::mt19937 rng(2026);
    for (int trial = 0; trial < 400; ++trial) {
        // Every other trial has long stretches of calls (loop bodies of hundreds of calls).
        const int longest_stretch = trial % 2 == 0 ? 1 : 300;
        std::function<std::string(int)> program = [&](int depth) -> std::string {
            std::string out;
            const int parts = std::uniform_int_distribution<int>(1, 4)(rng);
            for (int p = 0; p < parts; ++p) {
                if (depth < 3 && std::uniform_int_distribution<int>(0, 2)(rng) == 0) {
                    out += repeat(program(depth + 1), std::uniform_int_distribution<int>(1, 6)(rng));
                    continue;
                }
                const int stretch = std::uniform_int_distribution<int>(1, longest_stretch)(rng);
                for (int c = 0; c < stretch; ++c) out += static_cast<char>('a' + std::uniform_int_distribution<int>(0, 5)(rng));
            }
            return out;
        };
        const std::string pattern = program(0);
        std::vector<std::string> fed;
        const Sequence seq = fold(pattern, &fed);
        CAPTURE(pattern);
        CHECK(calls_of(seq, 0, 1) == fed);
    }
}

TEST_CASE("a snapshot at any point holds the calls so far and leaves the folder as it was")
{
    // Nested loops, so that snapshots fall inside iterations of loops being repeated (the fast path).
    std::string pattern = repeat(repeat("ab", 3) + "c", 4) + "d" + repeat("efg", 5) + "h";
    pattern = repeat(pattern, 3);
    LoopFolder snapshotted;
    std::vector<std::string> fed;
    for (char c : pattern) {
        snapshotted.append(call(c));
        fed.push_back(std::string(1, c) + ":8");
        CAPTURE(fed.size());
        CHECK(calls_of(test::with_rank(snapshotted.snapshot(), 0), 0, 1) == fed);
    }
    // Taking snapshots changed nothing the folder gives at the end.
    CHECK(test::with_rank(snapshotted.finish(), 0) == fold(pattern));
}

TEST_CASE("each call's time inside MPI is kept beside the computation before it, where it was measured")
{
    LoopFolder folder;
    const auto recorded = [](char site, double compute, double in_call) {
        RecordedCall c;
        c.op = Op::Send;
        c.signature = static_cast<uint64_t>(site);
        c.add(Role::peer, 1);
        c.compute_seconds = compute;
        c.in_call_seconds = in_call;
        return c;
    };
    double sum = 0;
    for (int i = 0; i < 60; ++i) {
        const double in_call = 1e-6 * (1 + i % 3);  // 1, 2 and 3 microseconds in turn
        sum += in_call;
        folder.append(recorded('a', 5e-6, in_call));
        folder.append(recorded('b', 1e-6, RecordedCall::kNotMeasured));
    }
    folder.append(recorded('a', 5e-6, 7e-6));  // an iteration left unfinished
    const Sequence seq = folder.finish();
    REQUIRE(seq.size() == 2);
    const Event& a = seq[0].loop().body.at(0).event();
    const Event& b = seq[0].loop().body.at(1).event();
    CHECK(a.in_call.count == 60);
    CHECK(a.in_call.mean == doctest::Approx(sum / 60));
    CHECK(a.in_call.min == doctest::Approx(1e-6));
    CHECK(a.in_call.max == doctest::Approx(3e-6));
    CHECK(a.compute.count == 60);
    CHECK(b.in_call.count == 0);
    CHECK(b.compute.count == 60);
    CHECK(seq[1].event().in_call.count == 1);
    CHECK(seq[1].event().in_call.mean == doctest::Approx(7e-6));
}
