#include "merge/loop_folding.hpp"
#include "merge/rank_merge.hpp"

#include "support/merge_tree.hpp"
#include "support/trace_builders.hpp"

#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <random>
#include <string>

using namespace htrace;
using htrace::test::call;
using htrace::test::calls_of;
using htrace::test::collective;

namespace {

// One rank's calls, folded as the tracer would, from a pattern of call-site letters. Upper-case
// letters are collectives (Bcast on the world communicator).
Sequence rank_trace(const std::string& pattern, Rank rank, int64_t bytes = 8, MergeRule rule = {})
{
    LoopFolder folder(rule, rank);
    for (char c : pattern) {
        Event e = std::isupper(static_cast<unsigned char>(c)) ? collective(c, rank) : call(c, bytes, rank);
        e.ranks = RankList();
        folder.append(std::move(e));
    }
    return test::with_rank(folder.finish(), rank);
}

std::vector<std::string> expanded(const std::string& pattern, int64_t bytes = 8)
{
    std::vector<std::string> out;
    for (char c : pattern) out.push_back(std::string(1, c) + ":" + std::to_string(bytes));
    return out;
}

std::string repeat(const std::string& s, int n)
{
    std::string out;
    for (int i = 0; i < n; ++i) out += s;
    return out;
}

}  // namespace

TEST_CASE("identical ranks merge into one trace whose events name all of them")
{
    std::vector<Sequence> traces;
    for (Rank r = 0; r < 16; ++r) traces.push_back(rank_trace(repeat(repeat("ab", 50) + "C", 20), r));
    const Sequence merged = test::merge_tree(std::move(traces));
    CHECK(test::node_count(merged) == test::node_count(rank_trace(repeat(repeat("ab", 50) + "C", 20), 0)));
    REQUIRE(merged.size() == 1);
    CHECK(merged[0].loop().body[1].event().ranks.to_string() == "0-15");
}

TEST_CASE("values that differ between ranks are kept per rank")
{
    const Sequence merged = merge_ranks(rank_trace(repeat("a", 10), 0, 80), rank_trace(repeat("a", 10), 1, 90));
    REQUIRE(merged.size() == 1);
    const Event& e = merged[0].loop().body[0].event();
    const Value* bytes = e.find(Role::bytes);
    REQUIRE(bytes != nullptr);
    CHECK(bytes->value_for(0) == 80);
    CHECK(bytes->value_for(1) == 90);
    CHECK(calls_of(merged, 0, 2) == expanded(repeat("a", 10), 80));
    CHECK(calls_of(merged, 1, 2) == expanded(repeat("a", 10), 90));
}

TEST_CASE("abbbbb merged with bbbbba aligns the five b's, not the a")
{
    // Distinct byte counts per b keep folding from hiding the alignment question.
    LoopFolder one;
    LoopFolder two;
    one.append(call('a', 1));
    for (int i = 0; i < 5; ++i) {
        one.append(call('b', 10 + i));
        two.append(call('b', 10 + i));
    }
    two.append(call('a', 1));
    Sequence a = test::with_rank(one.finish(), 0);
    Sequence b = test::with_rank(two.finish(), 1);
    const Sequence merged = merge_ranks(std::move(a), std::move(b));
    REQUIRE(merged.size() == 7);
    int shared = 0;
    for (const auto& n : merged) shared += n.event().ranks.size() == 2 ? 1 : 0;
    CHECK(shared == 5);
}

TEST_CASE("a(b(bcb)db)a and a(b(bcb)fb)a merge into one loop nest with d and f placed inside it")
{
    // The paper's loop structure, given as such: letters are call sites, parentheses loops.
    auto build = [](char differing, Rank rank) {
        auto e = [rank](char site) { return Node{call(site, 8, rank)}; };
        Sequence inner{e('b'), e('c'), e('b')};
        Sequence body{e('b'), test::loop(3, inner), e(differing), e('b')};
        return Sequence{e('a'), test::loop(4, body), e('a')};
    };
    const Sequence merged = merge_ranks(build('d', 0), build('f', 1));
    REQUIRE(merged.size() == 3);
    REQUIRE(merged[1].is_loop());
    const Sequence& body = merged[1].loop().body;
    REQUIRE(body.size() == 5);
    CHECK(body[1].is_loop());
    CHECK(body[2].event().signature == 'd');
    CHECK(body[2].event().ranks.to_string() == "0");
    CHECK(body[3].event().signature == 'f');
    CHECK(body[3].event().ranks.to_string() == "1");
    const std::string inner = repeat("b" + repeat("bcb", 3), 1);
    CHECK(calls_of(merged, 0, 2) == expanded("a" + repeat(inner + "db", 4) + "a"));
    CHECK(calls_of(merged, 1, 2) == expanded("a" + repeat(inner + "fb", 4) + "a"));
}

TEST_CASE("collectives of the same communicator merge even from different call sites")
{
    const Sequence merged = merge_ranks(rank_trace("xB", 0), rank_trace("yD", 1));
    int bcasts = 0;
    for (const auto& n : merged) {
        if (n.event().op == Op::Bcast) {
            ++bcasts;
            CHECK(n.event().ranks.size() == 2);
        }
    }
    CHECK(bcasts == 1);
    CHECK(merged.back().event().op == Op::Bcast);
}

// Every collective event of a merged trace names both ranks, and each rank still makes its calls.
void check_collectives_meet(const Sequence& merged, const std::string& rank0, const std::string& rank1)
{
    std::function<void(const Sequence&)> visit = [&](const Sequence& seq) {
        for (const auto& n : seq) {
            if (n.is_loop()) {
                visit(n.loop().body);
            } else if (n.event().op == Op::Bcast) {
                CHECK(n.event().ranks.size() == 2);
            }
        }
    };
    visit(merged);
    CHECK(calls_of(merged, 0, 2) == expanded(rank0));
    CHECK(calls_of(merged, 1, 2) == expanded(rank1));
}

TEST_CASE("collectives meet when one rank folded them into a loop and the other could not")
{
    // Rank 0 iterates its inner loop alike in both timesteps and folds them into a loop; rank 1's
    // inner counts differ, so its timesteps stay apart (a convergence loop).
    const std::string rank0 = repeat(repeat("a", 39) + "B", 2);
    const std::string rank1 = repeat("a", 38) + "B" + repeat("a", 40) + "B";
    check_collectives_meet(merge_ranks(rank_trace(rank0, 0), rank_trace(rank1, 1)), rank0, rank1);
    check_collectives_meet(merge_ranks(rank_trace(rank1, 1), rank_trace(rank0, 0)), rank0, rank1);
}

// The iteration counts of tests/mpi/programs/convergence.c: timestep t of the pair of ranks `pair`.
int convergence_iterations(uint32_t timestep, uint32_t pair)
{
    auto lcg = [](uint32_t state) { return state * 1664525u + 1013904223u; };
    uint32_t x = lcg(timestep * 7919u + pair * 104729u + 1u);
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    x = (x ^ (x >> 16)) * 0x45d9f3bu;
    return 38 + static_cast<int>((x ^ (x >> 16)) % 5);
}

// Every Bcast event of `merged` names all `ranks` ranks.
void check_every_collective_has(const Sequence& merged, int64_t ranks)
{
    std::function<void(const Sequence&)> visit = [&](const Sequence& seq) {
        for (const auto& n : seq) {
            if (n.is_loop()) {
                visit(n.loop().body);
            } else if (n.event().op == Op::Bcast) {
                CHECK(n.event().ranks.size() == ranks);
            }
        }
    };
    visit(merged);
}

TEST_CASE("collectives meet one to one even where pairing them shifted would line up more other calls")
{
    // Convergence loops at precision 95: inner counts within 5% fold into histogram loops, timesteps
    // fold differently on each rank, and a weight-only alignment paired timestep k with k+1.
    for (int ranks : {2, 4, 9}) {
        CAPTURE(ranks);
        const MergeRule rule{95, HistogramConfig{}};
        std::vector<Sequence> traces;
        for (Rank r = 0; r < ranks; ++r) {
            std::string pattern;
            // The odd last rank has no partner: its send is another call site.
            const std::string step = r == ranks - 1 && ranks % 2 == 1 ? "aqw" : "asw";
            for (uint32_t t = 0; t < 10; ++t) {
                pattern += repeat(step, convergence_iterations(t, static_cast<uint32_t>(r / 2))) + "B";
            }
            traces.push_back(rank_trace(pattern, r, 8, rule));
        }
        const Sequence merged = test::merge_tree(std::move(traces), rule);
        check_every_collective_has(merged, ranks);
    }
}

TEST_CASE("every rank's own order survives merging, for random similar ranks")
{
    std::mt19937 rng(99);
    for (int trial = 0; trial < 150; ++trial) {
        const std::string common = repeat("ab" + repeat("cd", 3) + "E", 3);
        const int ranks = std::uniform_int_distribution<int>(2, 9)(rng);
        std::vector<std::string> patterns;
        std::vector<Sequence> traces;
        for (Rank r = 0; r < ranks; ++r) {
            std::string p = common;
            // Each rank differs a little: an inserted call, a changed call, or a longer loop.
            const int edits = std::uniform_int_distribution<int>(0, 3)(rng);
            for (int k = 0; k < edits; ++k) {
                const size_t at = std::uniform_int_distribution<size_t>(0, p.size())(rng);
                const char c = static_cast<char>('f' + std::uniform_int_distribution<int>(0, 3)(rng));
                p.insert(at, 1, c);
            }
            patterns.push_back(p);
            traces.push_back(rank_trace(p, r));
        }
        const Sequence merged = test::merge_tree(std::move(traces));
        for (Rank r = 0; r < ranks; ++r) {
            CAPTURE(r);
            CAPTURE(patterns[static_cast<size_t>(r)]);
            CHECK(calls_of(merged, r, ranks) == expanded(patterns[static_cast<size_t>(r)]));
        }
    }
}

namespace {

// A rank's calls in a program that splits the world twice (communicator id 2 both times, freed in
// between): on each communicator, `steps` barriers, each after a number of sends of its own.
struct SplitProgram {
    std::vector<int> first_colour;   // per rank
    std::vector<int> second_colour;  // per rank; -1: MPI_UNDEFINED, the rank gets MPI_COMM_NULL
    std::vector<std::vector<int>> sends;  // per rank, per barrier: sends before it
};

Event split_event(char site, Rank rank, int colour)
{
    Event e;
    e.op = Op::Comm_split;
    e.signature = static_cast<uint64_t>(site);
    // Colour: as the tracer records it, the world rank of the new communicator's rank 0 (here the
    // colour itself stands for it); no communicator for MPI_UNDEFINED.
    e.params = {{Role::comm, Value(int64_t{0})},
                {Role::new_comm, Value(int64_t{colour < 0 ? -1 : 2})},
                {Role::color, Value(int64_t{colour})},
                {Role::key, Value(int64_t{0})}};
    e.ranks = RankList(rank);
    return e;
}

Sequence split_program_trace(const SplitProgram& program, Rank rank)
{
    LoopFolder folder({}, rank);
    const auto append = [&](Event e) {
        e.ranks = RankList();
        folder.append(std::move(e));
    };
    const auto& sends = program.sends[static_cast<size_t>(rank)];
    size_t barrier = 0;
    for (const int colour : {program.first_colour[static_cast<size_t>(rank)], program.second_colour[static_cast<size_t>(rank)]}) {
        const char site = barrier == 0 ? 'S' : 'T';
        append(split_event(site, rank, colour));
        if (colour < 0) continue;
        const size_t steps = sends.size() / 2;
        for (size_t k = 0; k < steps; ++k, ++barrier) {
            for (int s = 0; s < sends[barrier]; ++s) append(call('a', 8, rank));
            Event b = collective(site == 'S' ? 'B' : 'D', rank, Op::Barrier);
            b.params = {{Role::comm, Value(int64_t{2})}};
            append(std::move(b));
        }
        Event free;
        free.op = Op::Comm_free;
        free.signature = 'F';
        free.params = {{Role::comm, Value(int64_t{2})}};
        append(std::move(free));
    }
    return test::with_rank(folder.finish(), rank);
}

}  // namespace

TEST_CASE("barriers on the communicators of a split meet all their members, also where ids are used again")
{
    // Lossless: whatever each rank's sends between barriers, every barrier event of the merged trace
    // must hold every member of each of its ranks' communicator (the program's own colours), or
    // replay would split an instance. Weight alone paired ranks' barriers shifted, and paired
    // ranks of different colours in ways that later merges could not keep in step.
    std::mt19937 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        const int ranks = std::uniform_int_distribution<int>(2, 9)(rng);
        const int colours = std::uniform_int_distribution<int>(1, 3)(rng);
        const size_t steps = std::uniform_int_distribution<size_t>(1, 4)(rng);
        SplitProgram program;
        for (Rank r = 0; r < ranks; ++r) {
            program.first_colour.push_back(std::uniform_int_distribution<int>(0, colours - 1)(rng));
            program.second_colour.push_back(std::uniform_int_distribution<int>(-1, colours - 1)(rng) + 10);
            if (program.second_colour.back() == 9) program.second_colour.back() = -1;
            std::vector<int> sends;
            for (size_t k = 0; k < 2 * steps; ++k) sends.push_back(std::uniform_int_distribution<int>(0, 3)(rng));
            program.sends.push_back(sends);
        }
        std::vector<Sequence> traces;
        for (Rank r = 0; r < ranks; ++r) traces.push_back(split_program_trace(program, r));
        const Sequence merged = test::merge_tree(std::move(traces));

        const auto members = [&](const std::vector<int>& colour, Rank r) {
            std::vector<Rank> out;
            for (Rank m = 0; m < ranks; ++m) {
                if (colour[static_cast<size_t>(m)] == colour[static_cast<size_t>(r)]) out.push_back(m);
            }
            return out;
        };
        std::function<void(const Sequence&)> visit = [&](const Sequence& seq) {
            for (const auto& n : seq) {
                if (n.is_loop()) {
                    visit(n.loop().body);
                    continue;
                }
                const Event& e = n.event();
                if (e.op != Op::Barrier) continue;
                const auto& colour = e.signature == 'B' ? program.first_colour : program.second_colour;
                for (Rank p : e.ranks.expand()) {
                    for (Rank m : members(colour, p)) {
                        CAPTURE(trial);
                        CAPTURE(p);
                        CHECK(e.ranks.contains(m));
                    }
                }
            }
        };
        visit(merged);
        // And each rank still makes its own calls, in its order.
        for (Rank r = 0; r < ranks; ++r) {
            const Sequence own = split_program_trace(program, r);
            CHECK(calls_of(merged, r, ranks) == calls_of(own, r, ranks));
        }
    }
}

namespace {

// Rank `rank`'s steps: `steps` iterations of a (its bytes differ per rank) then a collective B,
// the last without B, as phase folding makes them (E (X E)^n).
Node cut_steps(Rank rank, int64_t steps, int64_t bytes)
{
    Loop loop{Value(steps), {Node{call('a', bytes, rank)}, Node{collective('B', rank)}}};
    loop.last_leaves_out = 1;
    return Node{std::move(loop)};
}

}  // namespace

TEST_CASE("loops whose last iteration leaves out their collective merge across ranks and keep each rank's calls")
{
    for (const int precision : {100, 0}) {
        CAPTURE(precision);
        const MergeRule rule{precision, HistogramConfig{}};
        const Sequence merged = merge_ranks({cut_steps(0, 3, 8)}, {cut_steps(1, 3, 16)}, rule);
        REQUIRE(merged.size() == 1);
        CHECK(merged[0].loop().last_leaves_out == 1);
        if (precision == 100) {
            CHECK(calls_of(merged, 0, 2) == std::vector<std::string>{"a:8", "B:8", "a:8", "B:8", "a:8"});
            CHECK(calls_of(merged, 1, 2) == std::vector<std::string>{"a:16", "B:8", "a:16", "B:8", "a:16"});
        }
        check_every_collective_has(merged, 2);
    }
}

TEST_CASE("at precision 0 a rank that had no step before its first collective turns its loop alike to meet it")
{
    // Rank 0: a B a B a, folded as 3 iterations of a B whose last leaves out B. Rank 1 made no a
    // before its first B: B a B a, a loop of 2 iterations of B a.
    const Sequence rank1{Node{Loop{Value(int64_t{2}), {Node{collective('B', 1)}, Node{call('a', 8, 1)}}}}};
    const Sequence merged = merge_ranks({cut_steps(0, 3, 8)}, rank1, MergeRule{0, HistogramConfig{}});
    REQUIRE(merged.size() == 1);
    CHECK(merged[0].loop().last_leaves_out == 1);
    check_every_collective_has(merged, 2);
    // What the two ranks made, counted as the trace stands for it: a's count is drawn now.
    Trace trace;
    trace.header.ranks = 2;
    trace.body = merged;
    std::map<char, double> calls;
    TraceWalker(trace, [&](const Event& e, Rank, const CommunicatorTable&, double weight) {
        calls[static_cast<char>(e.signature)] += weight;
    }).run();
    CHECK(calls['a'] == doctest::Approx(5));
    CHECK(calls['B'] == doctest::Approx(4));
}

TEST_CASE("such a loop merged with one that runs its whole body is unrolled, and the collectives still meet")
{
    // Rank 1 ran the same calls, a B a B a, but as a whole loop and one more a.
    const Sequence rank1{Node{Loop{Value(int64_t{2}), {Node{call('a', 8, 1)}, Node{collective('B', 1)}}}},
                         Node{call('a', 8, 1)}};
    const Sequence merged = merge_ranks({cut_steps(0, 3, 8)}, rank1);
    const std::vector<std::string> calls{"a:8", "B:8", "a:8", "B:8", "a:8"};
    CHECK(calls_of(merged, 0, 2) == calls);
    CHECK(calls_of(merged, 1, 2) == calls);
    check_every_collective_has(merged, 2);
}

TEST_CASE("per-rank values keep every rank's own over the tree, whether they run along lines or not")
{
    // Byte counts along a line on ranks 0-15 (stored with a step once three ranks line up), drawn at
    // random on ranks 16-31: the last merge takes both forms in.
    std::mt19937 rng(27);
    std::map<Rank, int64_t> given;
    std::vector<Sequence> traces;
    for (Rank r = 0; r < 32; ++r) {
        given[r] = r < 16 ? 8 * int64_t{r} + 8 : int64_t(1 + rng() % 5000);
        traces.push_back(rank_trace("a", r, given[r]));
    }
    const Sequence merged = test::merge_tree(std::move(traces));
    REQUIRE(merged.size() == 1);
    const Value* bytes = merged[0].event().find(Role::bytes);
    REQUIRE(bytes != nullptr);
    for (const auto& [rank, value] : given) CHECK(bytes->value_for(rank) == value);
    CHECK(merged[0].event().ranks.to_string() == "0-31");
}
