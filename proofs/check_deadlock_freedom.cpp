// The deadlock-freedom checker (README.md): the replay's own schedule generation, for every rank of
// hand-written and generated traces and several replay seeds, run against the model of MPI
// matching. Negative controls first, so a model that cannot fail does not pass for a proof.

#include "proofs/matching_model.hpp"
#include "proofs/trace_generator.hpp"
#include "replay/schedule.hpp"
#include "trace/render.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

using namespace htrace;
using namespace htrace::proofs;
using replay::CallKind;
using replay::RequestId;
using replay::ScheduledCall;

namespace {

constexpr uint64_t kGeneratedTraces = 10000;  // HTRACE_PROOF_TRACES overrides, for longer runs
constexpr uint64_t kSeedsPerTrace = 3;
constexpr uint64_t kFirstTraceSeed = 0x5EED0000;

uint64_t generated_traces()
{
    const char* text = std::getenv("HTRACE_PROOF_TRACES");
    return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : kGeneratedTraces;
}

// ---- Hand-built schedules for the negative controls (world communicator unless said) ----------------

ScheduledCall send(Op op, Rank peer, int64_t tag = 0, int64_t bytes = 8, RequestId request = 0)
{
    ScheduledCall call;
    call.kind = CallKind::send;
    call.op = op;
    call.peer = peer;
    call.peer_in_comm = peer;
    call.tag = tag;
    call.bytes = bytes;
    call.request = request;
    return call;
}

ScheduledCall post(Rank peer, RequestId request, int64_t tag = 0, int64_t bytes = 8)
{
    ScheduledCall call = send(Op::Irecv, peer, tag, bytes, request);
    call.kind = CallKind::receive;
    return call;
}

ScheduledCall complete(std::vector<RequestId> requests)
{
    ScheduledCall call;
    call.kind = CallKind::complete;
    call.op = Op::Waitall;
    call.requests = std::move(requests);
    return call;
}

ScheduledCall collective(Op op, int32_t root = -1, int64_t comm = 0)
{
    ScheduledCall call;
    call.kind = CallKind::collective;
    call.op = op;
    call.comm = comm;
    call.root = root;
    call.bytes = 8;
    return call;
}

ScheduledCall create(int64_t new_comm, std::vector<Rank> members)
{
    ScheduledCall call;
    call.kind = CallKind::create_comm;
    call.op = Op::Comm_split;
    call.new_comm = new_comm;
    call.members = std::move(members);
    return call;
}

// The model must refuse `schedules` as `kind`, saying `expected` somewhere in its report.
void check_refused(const std::vector<Schedule>& schedules, Failure kind, const std::string& expected)
{
    const ModelReport report = run_matching_model(schedules);
    INFO(report.problem);
    CHECK_FALSE(report.ok);
    CHECK(report.failure == kind);
    CHECK(report.problem.find(expected) != std::string::npos);
}

// ---- Running the replay's schedules -------------------------------------------------------------

struct Totals {
    uint64_t traces = 0;
    uint64_t ranks = 0;
    uint64_t schedules = 0;
    uint64_t calls = 0;
    std::map<Failure, uint64_t> failures;  // replays (trace and seed) that failed, by kind
    std::map<std::string, uint64_t> not_replayed;
};

// Every rank's schedule of `trace` for `seed`, run against the model.
ModelReport check_replay(const Trace& trace, uint64_t seed, bool compute, Totals& totals)
{
    std::vector<Schedule> schedules(static_cast<size_t>(trace.header.ranks));
    for (Rank r = 0; r < trace.header.ranks; ++r) {
        auto& schedule = schedules[static_cast<size_t>(r)];
        const auto summary = replay::generate_schedule(
            trace, seed, r, [&](const ScheduledCall& call) { schedule.push_back(call); },
            replay::ScheduleOptions{replay::ReplayMode::paired, compute});
        for (const auto& [name, count] : summary.not_replayed) totals.not_replayed[name] += count;
    }
    const ModelReport report = run_matching_model(schedules);
    totals.schedules += schedules.size();
    totals.calls += report.calls;
    if (!report.ok) ++totals.failures[report.failure];
    return report;
}

std::string failure(const std::string& what, uint64_t seed, const Trace& trace, const std::string& problem)
{
    const std::string end = !problem.empty() && problem.back() == '\n' ? "" : "\n";
    return what + ", replay seed " + std::to_string(seed) + ": " + problem + end + "trace:\n" + render_text(trace);
}

std::string failures_text(const Totals& totals)
{
    auto count = [&](Failure kind) {
        auto found = totals.failures.find(kind);
        return std::to_string(found == totals.failures.end() ? 0 : found->second);
    };
    return count(Failure::deadlock) + " deadlocks, " + count(Failure::mismatch) + " mismatches, " +
           count(Failure::leftover) + " with operations left over";
}

std::string not_replayed_text(const Totals& totals)
{
    std::string text;
    for (const auto& [name, count] : totals.not_replayed) text += " " + name + " x" + std::to_string(count);
    return text;
}

}  // namespace

TEST_CASE("the model reports blocking sends both ways, with receives posted after them, as a deadlock")
{
    check_refused({{send(Op::Send, 1), post(1, 1), complete({1})}, {send(Op::Send, 0), post(0, 1), complete({1})}},
                  Failure::deadlock, "deadlock");
}

TEST_CASE("the model reports a collective that only one member reaches as a deadlock")
{
    check_refused({{collective(Op::Barrier)}, {}, {}},
                  Failure::deadlock, "waits for {1,2} to reach collective #1");
}

TEST_CASE("the model reports a receive whose send never comes as a deadlock")
{
    check_refused({{post(1, 1), complete({1})}, {}}, Failure::deadlock, "waits for request 1");
}

TEST_CASE("the model reports a communicator creation that one of its members skips")
{
    check_refused({{create(2, {0, 1, 2})}, {create(2, {0, 1, 2})}, {}}, Failure::deadlock,
                  "waits for {2} to reach collective #1 on communicator {0,1,2}");
}

TEST_CASE("the model reports members that issue different collectives, roots or sizes")
{
    check_refused({{collective(Op::Bcast, 0)}, {collective(Op::Barrier)}}, Failure::mismatch, "different operations");
    check_refused({{collective(Op::Bcast, 0)}, {collective(Op::Bcast, 1)}}, Failure::mismatch, "different roots");
    ScheduledCall larger = collective(Op::Bcast, 0);
    larger.bytes = 16;
    check_refused({{collective(Op::Bcast, 0)}, {larger}}, Failure::mismatch, "disagree on bytes");
}

TEST_CASE("the model reports collectives met in a different order on two communicators")
{
    check_refused({{create(2, {0, 1}), collective(Op::Barrier, -1, 2), collective(Op::Barrier)},
                   {create(2, {0, 1}), collective(Op::Barrier), collective(Op::Barrier, -1, 2)}},
                  Failure::deadlock, "deadlock");
}

TEST_CASE("the model reports a send larger than the receive it matches")
{
    check_refused({{send(Op::Send, 1, 0, 16)}, {post(0, 1, 0, 8), complete({1})}}, Failure::mismatch,
                  "larger than the receive");
}

TEST_CASE("the model reports requests completed twice, never, or before they exist")
{
    check_refused({{send(Op::Isend, 0, 0, 8, 1), post(0, 2), complete({1, 2}), complete({1})}}, Failure::mismatch,
                  "a second time");
    check_refused({{send(Op::Isend, 0, 0, 8, 1), post(0, 2), complete({1})}}, Failure::leftover, "never completed");
    check_refused({{complete({1}), send(Op::Isend, 0, 0, 8, 1), post(0, 1)}}, Failure::mismatch,
                  "no earlier call created");
}

TEST_CASE("the model reports a send that nobody receives")
{
    check_refused({{send(Op::Isend, 1, 0, 8, 1), complete({})}, {}}, Failure::leftover, "never received");
}

TEST_CASE("the model accepts head-to-head blocking sends when each receive is posted before")
{
    const ModelReport report =
        run_matching_model({{post(1, 1, 3), send(Op::Ssend, 1, 3), complete({1})},
                            {post(0, 1, 3), send(Op::Ssend, 0, 3), complete({1})}});
    INFO(report.problem);
    CHECK(report.ok);
    CHECK(report.calls == 6);
}

TEST_CASE("the trace generator gives the same trace for the same seed")
{
    CHECK(generate_trace(42) == generate_trace(42));
    CHECK_FALSE(generate_trace(42) == generate_trace(43));
}

TEST_CASE("hand-written edge cases replay without deadlock or mismatch")
{
    Totals totals;
    for (const auto& edge : edge_case_traces()) {
        for (uint64_t seed = 1; seed <= 8; ++seed) {
            const ModelReport report = check_replay(edge.trace, seed, seed % 2 == 0, totals);
            if (!report.ok) {
                FAIL_CHECK(failure(edge.name, seed, edge.trace, report.problem));
                break;  // one seed shows the case; the next case may show something else
            }
        }
    }
    INFO("not replayed:" << not_replayed_text(totals));
    CHECK(totals.not_replayed.empty());
}

TEST_CASE("generated traces replay without deadlock or mismatch")
{
    constexpr uint64_t kShownFailures = 3;  // in full; the rest are counted
    const auto start = std::chrono::steady_clock::now();
    Totals totals;
    uint64_t shown = 0;
    const uint64_t count = generated_traces();
    for (uint64_t index = 0; index < count; ++index) {
        const uint64_t trace_seed = kFirstTraceSeed + index;
        const Trace trace = generate_trace(trace_seed);
        ++totals.traces;
        totals.ranks += static_cast<uint64_t>(trace.header.ranks);
        for (uint64_t k = 0; k < kSeedsPerTrace; ++k) {
            const uint64_t seed = trace_seed * 31 + k;
            const ModelReport report = check_replay(trace, seed, k % 2 == 1, totals);
            if (!report.ok && shown++ < kShownFailures) {
                FAIL_CHECK(failure("generate_trace(" + std::to_string(trace_seed) + ")", seed, trace, report.problem));
            }
        }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("deadlock-freedom: %llu generated traces (%llu ranks), %llu replay seeds each: %llu rank schedules, "
                "%llu calls checked in %.1f s: %s\n",
                static_cast<unsigned long long>(totals.traces), static_cast<unsigned long long>(totals.ranks),
                static_cast<unsigned long long>(kSeedsPerTrace), static_cast<unsigned long long>(totals.schedules),
                static_cast<unsigned long long>(totals.calls), seconds, failures_text(totals).c_str());
    CHECK(totals.failures.empty());
    INFO("not replayed:" << not_replayed_text(totals));
    CHECK(totals.not_replayed.empty());
}
