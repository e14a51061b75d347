#pragma once
// Small traces for unit tests: calls named by a letter (their call site), and the expansion of a
// compressed sequence back into each rank's calls, by the same walk h-dump and replay use.

#include "trace/event.hpp"
#include "trace/walk.hpp"

#include <map>
#include <string>
#include <vector>

namespace htrace::test {

// A send from call site `site` (a letter) with `bytes`; on rank `rank`.
inline Event call(char site, int64_t bytes = 8, Rank rank = 0, Op op = Op::Send)
{
    Event e;
    e.op = op;
    e.signature = static_cast<uint64_t>(site);
    e.params = {{Role::peer, Value(int64_t{1})}, {Role::tag, Value(int64_t{0})}, {Role::bytes, Value(bytes)},
                {Role::comm, Value(int64_t{0})}};
    e.ranks = RankList(rank);
    e.compute.add(1e-6);
    return e;
}

inline Event collective(char site, Rank rank, Op op = Op::Bcast)
{
    Event e;
    e.op = op;
    e.signature = static_cast<uint64_t>(site);
    e.params = {{Role::bytes, Value(int64_t{8})}, {Role::root, Value(int64_t{0})}, {Role::comm, Value(int64_t{0})}};
    e.ranks = RankList(rank);
    return e;
}

inline Node loop(int64_t iterations, Sequence body)
{
    return Node{Loop{Value(iterations), std::move(body)}};
}

// "a:8" per call of `rank`, in the order the trace says the rank made them.
inline std::vector<std::string> calls_of(const Sequence& seq, Rank rank, int32_t ranks)
{
    Trace trace;
    trace.header.ranks = ranks;
    trace.body = seq;
    std::vector<std::string> out;
    TraceWalker walker(trace, [&](const Event& e, Rank r, const CommunicatorTable&, double) {
        if (r != rank) return;
        std::string text(1, static_cast<char>(e.signature));
        for (const auto& p : e.params) {
            if (p.role == Role::bytes) text += ":" + std::to_string(p.value.value_for(r).value_or(-1));
        }
        out.push_back(text);
    });
    walker.run();
    return out;
}

// Calls per call site (a letter) as the walk counts them: a loop whose count is a histogram by its
// mean, so the sum is what the trace stands for on average.
inline std::map<char, double> expected_calls(const Sequence& seq, int32_t ranks = 1)
{
    Trace trace;
    trace.header.ranks = ranks;
    trace.body = seq;
    std::map<char, double> out;
    TraceWalker walker(trace, [&](const Event& e, Rank, const CommunicatorTable&, double weight) {
        out[static_cast<char>(e.signature)] += weight;
    });
    walker.run();
    return out;
}

// The folder leaves participants to its caller, as the tracer sets them at MPI_Finalize.
inline Sequence with_rank(Sequence seq, Rank rank)
{
    for (auto& node : seq) {
        if (node.is_event()) {
            node.event().ranks = RankList(rank);
        } else {
            node.loop().body = with_rank(std::move(node.loop().body), rank);
        }
    }
    return seq;
}

// Number of nodes (events and loops) in a sequence, nested ones included.
inline size_t node_count(const Sequence& seq)
{
    size_t n = 0;
    for (const auto& node : seq) n += 1 + (node.is_loop() ? node_count(node.loop().body) : 0);
    return n;
}

}  // namespace htrace::test
