#include "replay/expected_timeline.hpp"

#include "replay/schedule.hpp"
#include "trace/render.hpp"

#include <algorithm>

namespace htrace::replay {

namespace {

// Thrown from the schedule's sink: a drawn loop count can make more calls than the count check saw.
struct TooManyCalls {};

// The walk steps (over all ranks' walks) a timeline may take per call --max-calls allows.
constexpr uint64_t kWorkPerCall = 10;

// Causal where every rank can replay causally (the traced run's own order), as h-replay chooses.
ReplayMode replay_mode(const Trace& trace)
{
    for (Rank r = 0; r < trace.header.ranks; ++r) {
        if (!causal_replay_obstacle(trace, trace.header.seed, r).empty()) return ReplayMode::paired;
    }
    return ReplayMode::causal;
}

}  // namespace

std::string write_expected_timeline(const Trace& trace, uint64_t max_calls, timeline::TimelineWriter& writer)
{
    uint64_t steps = 0;
    if (RenderError error = check_call_count(trace, max_calls, nullptr, &steps); !error.empty()) return error;
    // Every rank's schedule (and its check for causal replay) walks the whole trace: a trace of many
    // ranks whose events are each a few ranks' costs ranks x steps, which the calls do not bound.
    uint64_t work = 0;
    if (__builtin_mul_overflow(static_cast<uint64_t>(std::max(trace.header.ranks, 0)), steps, &work) ||
        work / kWorkPerCall > max_calls) {
        return "laying out the timeline walks the trace once per rank: " + std::to_string(trace.header.ranks) +
               " ranks x " + std::to_string(steps) + " steps, more than " + std::to_string(kWorkPerCall) +
               " x --max-calls " + std::to_string(max_calls);
    }
    const ScheduleOptions options{replay_mode(trace), true};
    uint64_t calls = 0;
    for (Rank r = 0; r < trace.header.ranks; ++r) {
        timeline::RankTimeline timeline(r, trace.header.ranks);
        double clock = 0;
        try {
            generate_schedule(trace, trace.header.seed, r, [&](const ScheduledCall& call) {
                if (call.kind == CallKind::compute) {
                    clock += std::max(0.0, call.seconds);
                    return;
                }
                if (++calls > max_calls) throw TooManyCalls{};
                const double seconds =
                    call.event != nullptr && call.event->in_call.count > 0 ? std::max(0.0, call.event->in_call.mean) : 0;
                timeline.add(call, clock, clock + seconds);
                clock += seconds;
            }, options);
        } catch (const TooManyCalls&) {
            return "the timeline has more than --max-calls " + std::to_string(max_calls) + " calls";
        }
        if (timeline.dropped() > 0) {
            return "rank " + std::to_string(r) + " makes more than " + std::to_string(timeline.calls().size()) +
                   " calls, more than one rank's timeline holds";
        }
        writer.add(timeline);
    }
    return writer.finish();
}

}  // namespace htrace::replay
