#include "trace/trace_check.hpp"

#include "trace/limits.hpp"
#include "trace/rank_times.hpp"
#include "trace/render.hpp"
#include "trace/topology.hpp"
#include "trace/utf8.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <string>
#include <string_view>

namespace htrace {
namespace {

using namespace limits;

std::string number(double v)
{
    char text[32];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}

// Text of the file quoted in a message, which stays one line: control characters as '?'.
std::string printable(std::string_view text)
{
    std::string out(text);
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    }
    return out;
}

// What is wrong with a text of the header, "" if nothing.
std::string text_problem(std::string_view field, const std::string& text, uint64_t most)
{
    if (text.size() > most) {
        return std::string(field) + " of " + std::to_string(text.size()) + " bytes is longer than " +
               std::to_string(most);
    }
    if (!is_valid_utf8(text)) return std::string(field) + " is not valid UTF-8";
    return {};
}

// A file-name pattern: braces doubled, or a "{rank}" or "{rank:0N}" field, N at most kMostRankWidth.
std::string pattern_problem(std::string_view pattern)
{
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if (c != '{' && c != '}') continue;
        if (i + 1 < pattern.size() && pattern[i + 1] == c) {
            ++i;
            continue;
        }
        if (c == '}') return "a lone '}'";
        const size_t close = pattern.find('}', i);
        if (close == std::string_view::npos) return "a '{' that is not closed";
        const std::string_view field = pattern.substr(i + 1, close - i - 1);
        if (field != "rank") {
            const std::string_view width = field.substr(std::min<size_t>(field.size(), 6));
            if (!field.starts_with("rank:0") || width.empty() ||
                !std::all_of(width.begin(), width.end(), [](char d) { return d >= '0' && d <= '9'; })) {
                return "a field {" + printable(field.substr(0, 32)) + "} that is not {rank} or {rank:0N}";
            }
            if (width.size() > 2 || std::stoi(std::string(width)) > kMostRankWidth) {
                return "a rank width of " + std::string(width.substr(0, 32)) + " (at most " +
                       std::to_string(kMostRankWidth) + ")";
            }
        }
        i = close;
    }
    return {};
}

// Saturating arithmetic for walk_steps.
uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t multiply(uint64_t a, uint64_t b) { return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b; }

// The smallest and largest value a Value gives any call.
std::pair<int64_t, int64_t> value_range(const Value& v)
{
    if (v.is_exact()) return {v.exact(), v.exact()};
    if (v.is_per_rank()) return v.per_rank_range();
    if (v.histogram().count() == 0) return {0, 0};
    return {v.histogram().min().value, v.histogram().max().value};
}

uint64_t most_iterations(const Loop& loop)
{
    return static_cast<uint64_t>(std::max<int64_t>(value_range(loop.iterations).second, 0));
}

// What values a role allows: [low, high]; roles that are keys are looked up besides.
struct Allowed {
    int64_t low;
    int64_t high;
};

Allowed allowed(Role role, int64_t ranks)
{
    switch (role) {
    case Role::peer:
    case Role::source:
    case Role::matched_peer:
    case Role::cancelled_peer: return {kProcNull, ranks - 1};  // relative, or ANY_SOURCE / PROC_NULL
    case Role::root: return {kRootSelf, ranks - 1};
    case Role::color:
    case Role::key:
    case Role::remote_leader: return {kNoComm, ranks - 1};
    case Role::tag:
    case Role::recv_tag:
    case Role::matched_tag:
    case Role::cancelled_tag: return {kAnyTag, kMostTag};
    case Role::bytes:
    case Role::recv_bytes:
    case Role::target_bytes: return {0, kMostBytes};
    case Role::file_size: return {0, kMostFileBytes};
    case Role::offset:
    case Role::view_disp:
    case Role::view_lb:
    case Role::view_block:
    case Role::view_stride:
    case Role::view_extent: return {-kMostFileBytes, kMostFileBytes};
    case Role::comm:
    case Role::new_comm:
    case Role::cancelled_comm:
    case Role::window:
    case Role::file: return {kNoComm, kMostId};
    case Role::requests: return {0, kMostTag};
    case Role::completed: return {-kMostTag, kMostTag};
    case Role::view_blocks: return {-1, kMostTag};
    case Role::synchronous:
    case Role::buffered: return {0, 1};
    case Role::whence: return {kSeekSet, kSeekEnd};
    case Role::lock_type: return {kLockExclusive, kLockShared};
    case Role::amode:
    case Role::assertion:
    case Role::thread: return {0, kMostTag};
    case Role::topology:
    case Role::file_name: return {kNoComm, std::numeric_limits<int32_t>::max()};
    case Role::completed_set:
    case Role::cancelled_set:
    case Role::group: break;
    }
    return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
}

class Checker {
public:
    explicit Checker(const Trace& trace) : trace_(trace), ranks_(trace.header.ranks) {}

    std::string run()
    {
        created_windows(trace_.body);
        sequence(trace_.body);
        if (!problem_.empty()) return problem_;
        const uint64_t steps = walk_steps(trace_.body);
        if (steps > kMostWalkSteps) {
            return "corrupt: a walk of the trace takes up to " + std::to_string(steps) + " steps (at most " +
                   std::to_string(kMostWalkSteps) + ": loop counts too large)";
        }
        // Each call recorded its compute time: loop counts that make many more calls than the events
        // recorded were not traced.
        const double expected = expected_calls(trace_.body);
        const double recorded = recorded_calls(trace_.body);
        if (expected > kUnrecordedCalls + kCallsPerRecorded * recorded) {
            return "corrupt: loop counts make " + number(expected) + " calls of events that recorded " +
                   number(recorded);
        }
        return {};
    }

private:
    void sequence(const Sequence& seq)
    {
        for (const auto& node : seq) {
            if (!problem_.empty()) return;
            if (node.is_event()) {
                ++event_number_;
                event(node.event());
            } else {
                loop(node.loop());
                sequence(node.loop().body);
            }
        }
    }

    // "event 12 (MPI_Send)".
    std::string event_name(const Event& e) const
    {
        return "event " + std::to_string(event_number_) + " (" + std::string(operation_name(e.op)) + ")";
    }

    void fail(const std::string& where, const std::string& what)
    {
        if (problem_.empty()) problem_ = "corrupt: " + where + ": " + what;
    }

    void loop(const Loop& l)
    {
        const Event* first = nullptr;
        for (const Sequence* body = &l.body; first == nullptr && body != nullptr && !body->empty();) {
            const Node& node = body->front();
            if (node.is_event()) {
                first = &node.event();
            } else {
                body = &node.loop().body;
            }
        }
        const std::string where = first != nullptr ? "the loop starting at event " + std::to_string(event_number_ + 1) +
                                                         " (" + std::string(operation_name(first->op)) + ")"
                                                   : "a loop after event " + std::to_string(event_number_);
        const auto [low, high] = value_range(l.iterations);
        if (low < 0 || high > kMostLoopIterations) {
            fail(where, "count " + std::to_string(low < 0 ? low : high) + " is outside 0.." +
                            std::to_string(kMostLoopIterations));
        }
    }

    // The ids of the windows the trace's creations make (every window creation is a modelled call).
    void created_windows(const Sequence& seq)
    {
        for (const auto& node : seq) {
            if (node.is_loop()) {
                created_windows(node.loop().body);
                continue;
            }
            const Event& e = node.event();
            if (!is_window_collective(e.op) || e.op == Op::Win_fence || e.op == Op::Win_free) continue;
            if (const Value* window = e.find(Role::window)) add_values(*window, windows_);
        }
    }

    static void add_values(const Value& v, std::set<int64_t>& out)
    {
        if (v.is_exact()) out.insert(v.exact());
        if (v.is_per_rank()) {
            for (const auto& entry : v.per_rank()) out.insert(entry.value);
        }
    }

    void event(const Event& e)
    {
        const std::string where = event_name(e);
        // MPI's collectives take no peer, source or tag: such an event is a damaged operation code.
        if (operation_kind(e.op) == OperationKind::collective) {
            for (const Role role : {Role::peer, Role::tag, Role::source, Role::recv_tag, Role::matched_peer,
                                    Role::matched_tag}) {
                if (e.find(role) != nullptr) return fail(where, "a collective with a " + std::string(role_name(role)));
            }
        }
        if (operation_kind(e.op) == OperationKind::one_sided || is_window_collective(e.op)) {
            if (const Value* window = e.find(Role::window)) {
                std::set<int64_t> used;
                add_values(*window, used);
                for (const int64_t id : used) {
                    if (id != kNoComm && !windows_.contains(id)) {
                        return fail(where, "window " + std::to_string(id) + " is made by no call of the trace");
                    }
                }
            }
        }
        ranks(where, "participants", e.ranks);
        for (const auto& group : e.compute_by_rank) {
            ranks(where, "a group of ranks' compute times", group.ranks);
            compute(where, group.compute);
        }
        compute(where, e.compute);
        in_call(where, e.in_call);
        for (const auto& p : e.params) param(where, p);
    }

    // Every member within the trace's ranks, none twice.
    void ranks(const std::string& where, std::string_view what, const RankList& list)
    {
        if (!problem_.empty()) return;
        bool bad = false;
        int64_t size = 0;
        list.for_each_run([&](const RankRun& run) {
            if (bad) return;
            if (auto problem = rank_run_problem(run, ranks_)) {
                fail(where, std::string(what) + ": " + *problem);
                bad = true;
            } else if ((size += run.size()) > ranks_) {
                fail(where, std::string(what) + ": more ranks than the trace's " + std::to_string(ranks_));
                bad = true;
            }
        });
        if (bad) return;
        // expand() lists each rank once; a walk visits every member of every run.
        if (static_cast<int64_t>(list.expand().size()) != size) fail(where, std::string(what) + ": a rank is listed twice");
    }

    void compute(const std::string& where, const TimeStats& t)
    {
        if (t.count == 0) return;
        const double most = trace_.header.traced_seconds * 1.1 + kComputeSlack;
        for (const double seconds : {t.mean, t.min, t.max}) {
            if (!(seconds >= 0 && seconds <= most)) {
                return fail(where, "compute time " + number(seconds) + " s is outside 0.." + number(most) +
                                       " s (the traced run's length)");
            }
        }
        if (!(t.min <= t.max) || !std::isfinite(t.m2) || t.m2 < 0) return fail(where, "inconsistent compute times");
    }

    // Not bounded by the traced run: MPI_Init's call comes before it. Only reported, never waited for.
    void in_call(const std::string& where, const TimeStats& t)
    {
        if (t.count == 0 || !problem_.empty()) return;
        for (const double seconds : {t.mean, t.min, t.max}) {
            if (!(seconds >= 0 && std::isfinite(seconds))) return fail(where, "time in call " + number(seconds) + " s");
        }
        if (!(t.min <= t.mean && t.mean <= t.max) || !std::isfinite(t.m2) || t.m2 < 0) {
            return fail(where, "inconsistent times in calls");
        }
    }

    void param(const std::string& where, const Param& p)
    {
        if (!problem_.empty()) return;
        const std::string role(role_name(p.role));
        if (p.value.is_per_rank()) {
            for (const auto& entry : p.value.per_rank_entries()) ranks(where, role + "'s ranks", entry.ranks);
        }
        if (p.value.is_histogram() && role_is_categorical(p.role)) {
            return fail(where, role + " is a histogram (such values are never merged)");
        }
        const auto [low, high] = value_range(p.value);
        const Allowed range = allowed(p.role, ranks_);
        if (low < range.low || high > range.high) {
            return fail(where, role + " " + std::to_string(low < range.low ? low : high) + " is outside " +
                                   std::to_string(range.low) + ".." + std::to_string(range.high));
        }
        if (p.role == Role::file_name || p.role == Role::topology) {
            const auto& keys = p.role == Role::file_name ? trace_.header.file_names : trace_.header.topologies;
            const auto known = [&](int64_t key) { return key == kNoComm || keys.contains(key); };
            bool all_known = true;
            if (p.value.is_exact()) {
                all_known = known(p.value.exact());
            } else {
                for (const auto& entry : p.value.per_rank()) all_known = all_known && known(entry.value);
            }
            if (!all_known) fail(where, role + " names no entry of the header's " + role + "s");
        }
    }

    const Trace& trace_;
    int64_t ranks_;
    int64_t event_number_ = 0;
    std::set<int64_t> windows_;
    std::string problem_;
};

// The shares are fractions of a rank's time: at most 1, and a little more as 16-bit codes round up.
constexpr double kMostShare = 1.001;

std::string rank_times_problem(const RankTimes& times, int32_t ranks)
{
    for (const auto& [name, spread] : named_spreads(times, &RankSpreadField::label)) {
        const std::string which = std::string("the ranks' ") + name;
        if (spread->min_rank < 0 || spread->min_rank >= ranks || spread->max_rank < 0 || spread->max_rank >= ranks) {
            return which + " names a rank not of the trace";
        }
        if (!(spread->min <= spread->mean && spread->mean <= spread->max)) {
            return which + " has a mean " + number(spread->mean) + " outside its least " + number(spread->min) +
                   " and most " + number(spread->max);
        }
        if (spread->max > kMostTracedSeconds) return which + " is more than " + number(kMostTracedSeconds) + " s";
    }
    if (times.mpi_share.max > kMostShare || times.io_share.max > kMostShare) return "a rank's share of its time is above 1";
    return {};
}

}  // namespace

std::string check_header(const TraceHeader& h)
{
    const auto fail = [](const std::string& what) { return "corrupt: header: " + what; };
    if (h.ranks < 1 || h.ranks > kMostRanks) {
        return fail("rank count " + std::to_string(h.ranks) + " is outside 1.." + std::to_string(kMostRanks));
    }
    if (h.precision < 0 || h.precision > 100) {
        return fail("precision " + std::to_string(h.precision) + " is outside 0..100");
    }
    if (h.histogram.bins < 1 || h.histogram.bins > kMostBins) {
        return fail("histogram bins " + std::to_string(h.histogram.bins) + " is outside 1.." + std::to_string(kMostBins));
    }
    if (h.histogram.rebalance_interval < 1 || h.histogram.rebalance_interval > kMostRebalanceInterval) {
        return fail("rebalance interval " + std::to_string(h.histogram.rebalance_interval) + " is outside 1.." +
                    std::to_string(kMostRebalanceInterval));
    }
    if (auto problem = text_problem("MPI library", h.mpi_library, kMostHeaderTextBytes); !problem.empty()) {
        return fail(problem);
    }
    if (auto problem = text_problem("command line", h.command_line, kMostHeaderTextBytes); !problem.empty()) {
        return fail(problem);
    }
    if (h.start_time < 0 || h.start_time > kMostStartTime) {
        return fail("start time " + std::to_string(h.start_time) + " is outside 0.." + std::to_string(kMostStartTime));
    }
    if (!(h.traced_seconds >= 0 && h.traced_seconds <= kMostTracedSeconds)) {
        return fail("traced seconds " + number(h.traced_seconds) + " is outside 0.." + number(kMostTracedSeconds));
    }
    if (auto problem = text_problem("host", h.host, kMostNameBytes); !problem.empty()) return fail(problem);
    if (h.stops.size() > static_cast<size_t>(h.ranks)) {
        return fail(std::to_string(h.stops.size()) + " ranks' stops in a " + std::to_string(h.ranks) + "-rank trace");
    }
    std::set<Rank> stopped;
    for (const RankStop& stop : h.stops) {
        const std::string which = "the stop of rank " + std::to_string(stop.rank);
        if (stop.rank < 0 || stop.rank >= h.ranks) return fail(which + ": not a rank of the trace");
        if (!stopped.insert(stop.rank).second) return fail(which + ": given twice");
        if (auto problem = text_problem(which, stop.reason, kMostNameBytes); !problem.empty()) return fail(problem);
    }
    if (h.extrapolation.size() > kMostExtrapolationLines) {
        return fail(std::to_string(h.extrapolation.size()) + " lines of extrapolation (at most " +
                    std::to_string(kMostExtrapolationLines) + ")");
    }
    for (const std::string& line : h.extrapolation) {
        if (auto problem = text_problem("a line of extrapolation", line, kMostNameBytes); !problem.empty()) {
            return fail(problem);
        }
    }
    if (h.rank_times) {
        if (auto problem = rank_times_problem(*h.rank_times, h.ranks); !problem.empty()) return fail(problem);
    }
    for (const auto& [key, name] : h.file_names) {
        const std::string which = "file name " + std::to_string(key);
        if (key < 0 || key > std::numeric_limits<int32_t>::max()) return fail(which + " has a key out of range");
        if (auto problem = text_problem(which, name, kMostNameBytes); !problem.empty()) return fail(problem);
        if (auto problem = pattern_problem(name); !problem.empty()) return fail(which + " has " + problem);
    }
    for (const auto& [key, text] : h.topologies) {
        const std::string which = "topology " + std::to_string(key);
        if (key < 0 || key > std::numeric_limits<int32_t>::max()) return fail(which + " has a key out of range");
        if (auto problem = text_problem(which, text, kMostTopologyBytes); !problem.empty()) return fail(problem);
        if (!parse_topology(text)) return fail(which + " is not a topology");
    }
    return {};
}

std::optional<std::string> rank_run_problem(const RankRun& run, int64_t ranks)
{
    // The run's smallest and largest member, and its size, dimension by dimension.
    int64_t low = run.start;
    int64_t high = run.start;
    int64_t size = 1;
    for (const auto& dim : run.dims) {
        if (dim.count < 1) return "a run with a dimension of " + std::to_string(dim.count) + " ranks";
        size *= dim.count;  // at most kMostRanks before, and a count is below 2^31: no overflow
        if (size > ranks) return "a run of more ranks than the trace's " + std::to_string(ranks);
        const int64_t reach = int64_t{dim.count - 1} * dim.stride;
        (reach < 0 ? low : high) += reach;
        if (low < 0 || high >= ranks) break;
    }
    if (low < 0 || high >= ranks) {
        return "rank " + std::to_string(low < 0 ? low : high) + " is not a rank of a " + std::to_string(ranks) +
               "-rank trace";
    }
    return std::nullopt;
}

std::string check_trace(const Trace& trace)
{
    if (auto problem = check_header(trace.header); !problem.empty()) return problem;
    for (const auto& [signature, location] : trace.locations) {
        if (auto problem = text_problem("the module of call site " + render_signature(signature), location.module,
                                        kMostNameBytes);
            !problem.empty()) {
            return "corrupt: " + problem;
        }
    }
    return Checker(trace).run();
}

double expected_calls(const Sequence& sequence)
{
    double calls = 0;
    for (const auto& node : sequence) {
        if (node.is_event()) {
            calls += static_cast<double>(node.event().ranks.size());
            continue;
        }
        const Value& count = node.loop().iterations;
        double mean = 0;
        if (count.is_exact()) {
            mean = static_cast<double>(count.exact());
        } else if (count.is_histogram()) {
            mean = count.histogram().mean();
        } else {
            // value + i * step over the i-th of n ranks: on average value + step * (n - 1) / 2.
            double ranks = 0;
            for (const auto& entry : count.per_rank_entries()) {
                const auto n = static_cast<double>(entry.ranks.size());
                mean += n * (static_cast<double>(entry.value) + static_cast<double>(entry.step) * (n - 1) / 2);
                ranks += n;
            }
            mean = ranks > 0 ? mean / ranks : 0;
        }
        calls += std::max(mean, 0.0) * expected_calls(node.loop().body);
    }
    return calls;
}

double recorded_calls(const Sequence& sequence)
{
    double calls = 0;
    for (const auto& node : sequence) {
        calls += node.is_event() ? static_cast<double>(node.event().compute.count) : recorded_calls(node.loop().body);
    }
    return calls;
}

uint64_t walk_steps(const Sequence& sequence)
{
    uint64_t steps = 0;
    for (const auto& node : sequence) {
        if (node.is_event()) {
            steps = add(steps, static_cast<uint64_t>(std::max<int64_t>(node.event().ranks.size(), 1)));
        } else {
            const Loop& loop = node.loop();
            steps = add(steps, add(1, multiply(most_iterations(loop), add(walk_steps(loop.body), 1))));
        }
    }
    return steps;
}

}  // namespace htrace
