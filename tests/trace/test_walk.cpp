#include "trace/walk.hpp"

#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

using namespace htrace;
using htrace::test::call;
using htrace::test::calls_of;

namespace {

// e, then x, on `ranks`: a step and what comes between steps.
Loop steps(Value iterations, const RankList& ranks, uint32_t last_leaves_out = 1)
{
    Event e = call('e', 8);
    Event x = call('x', 16);
    e.ranks = ranks;
    x.ranks = ranks;
    Loop loop{std::move(iterations), {Node{e}, Node{x}}};
    loop.last_leaves_out = last_leaves_out;
    return loop;
}

using Calls = std::vector<std::string>;

}  // namespace

TEST_CASE("a loop whose last iteration leaves out the end of its body makes E (X E)^n")
{
    const Sequence seq{Node{steps(Value(int64_t{3}), RankList::from_sorted({0, 1}))}};
    for (Rank r = 0; r < 2; ++r) CHECK(calls_of(seq, r, 2) == Calls{"e:8", "x:16", "e:8", "x:16", "e:8"});
    // Without the cut, every iteration runs the whole body.
    Loop whole = steps(Value(int64_t{2}), RankList(0), 0);
    CHECK(calls_of({Node{whole}}, 0, 1) == Calls{"e:8", "x:16", "e:8", "x:16"});
}

TEST_CASE("with counts per rank, each rank's own last iteration leaves out the end")
{
    const Value counts(std::vector<PerRankValue>{{3, RankList(0)}, {1, RankList(1)}, {2, RankList(2)}});
    const Sequence seq{Node{steps(counts, RankList::from_sorted({0, 1, 2}))}, Node{call('f', 4)}};
    CHECK(calls_of(seq, 0, 3) == Calls{"e:8", "x:16", "e:8", "x:16", "e:8", "f:4"});
    CHECK(calls_of(seq, 1, 3) == Calls{"e:8"});
    CHECK(calls_of(seq, 2, 3) == Calls{"e:8", "x:16", "e:8"});
}

TEST_CASE("a drawn count runs the end of the body one time fewer; visited once, it counts so on average")
{
    // Counts 0, 2 and 4: the body's start runs 2 times on average, its end (4 - 1 + 2 - 1) / 3 = 4/3.
    Histogram counts(HistogramConfig{});
    for (int64_t n : {0, 2, 4}) counts.add(n, 0);
    Trace trace;
    trace.header.ranks = 1;
    trace.body = {Node{steps(Value(counts), RankList(0))}};
    std::map<char, double> weights;
    TraceWalker walker(trace, [&](const Event& e, Rank, const CommunicatorTable&, double weight) {
        weights[static_cast<char>(e.signature)] += weight;
    });
    walker.run();
    CHECK(weights['e'] == doctest::Approx(2.0));
    CHECK(weights['x'] == doctest::Approx(4.0 / 3.0));

    // Drawn, instance after instance: one x fewer than e in each, none where the count is 0.
    trace.body = {Node{test::loop(30, {Node{steps(Value(counts), RankList(0))}, Node{call('f', 4)}})}};
    HistogramSampler draws(9);
    WalkCursor cursor(trace, &draws);
    int e_calls = 0;
    int x_calls = 0;
    int instances = 0;
    while (const auto instance = cursor.next()) {
        const char site = static_cast<char>(instance->event->signature);
        if (site == 'f') {
            CHECK(x_calls == std::max(e_calls - 1, 0));
            instances += e_calls > 0 ? 1 : 0;
            e_calls = 0;
            x_calls = 0;
        }
        e_calls += site == 'e' ? 1 : 0;
        x_calls += site == 'x' ? 1 : 0;
    }
    CHECK(instances > 0);
}
