#pragma once
// One rank's calls on a clock: what a timeline format (a Chrome trace, an OTF2 archive) needs of each
// call of a schedule (replay/schedule.hpp), with the communicators the calls were made on. Filled
// from the schedule as a replay issues it (h-replay, with the times it measured) or as the trace
// expects it (h-dump, with the traced mean times: expected_timeline.hpp), so both show the same calls.

#include "replay/schedule.hpp"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace htrace::timeline {

struct TimedCall {
    Op op{};
    double start = 0;          // seconds since the rank's origin
    double end = 0;
    uint32_t comm = 0;         // index into RankTimeline::communicators()
    Rank peer = -1;            // world rank: a send's destination, a receive's source (-1: none, a wildcard
                               // not yet matched, or MPI_PROC_NULL); sendrecv: the send side
    Rank source = -1;          // sendrecv: the receive side, as `peer`
    int32_t root = -1;         // rooted collective: the root's rank in `comm`
    int64_t tag = 0;
    int64_t recv_tag = 0;      // sendrecv
    int64_t bytes = 0;         // sends, collectives: the send side; receives: up to this many
    int64_t recv_bytes = 0;    // sendrecv, collectives: the receive side
    uint64_t signature = 0;    // the trace event's call path (0: none, the final completion)
    bool operator==(const TimedCall&) const = default;
};

class RankTimeline {
public:
    // Calls past `most_calls` are counted, not kept: a replay of 10^9 calls must not exhaust memory.
    RankTimeline(Rank rank, int32_t world_size, uint64_t most_calls = kDefaultMostCalls);

    static constexpr uint64_t kDefaultMostCalls = 20'000'000;

    // A call of the schedule, issued from `start` to `end`; computation is not a call and is left out.
    void add(const replay::ScheduledCall& call, double start, double end);

    Rank rank() const { return rank_; }
    const std::vector<TimedCall>& calls() const { return calls_; }
    // Each communicator the calls used, as its members' world ranks in its order: 0 is the world.
    // A communicator freed and made again with the same members is one entry.
    const std::vector<std::vector<Rank>>& communicators() const { return communicators_; }
    uint64_t dropped() const { return dropped_; }

    // As bytes, to move the timeline to the rank that writes the file, and back.
    std::string serialize() const;
    // Empty on success, else what is wrong with `bytes`.
    static std::string deserialize(const std::string& bytes, RankTimeline& out);

private:
    uint32_t communicator_of(int64_t comm);
    uint32_t index_of(const std::vector<Rank>& members);

    Rank rank_ = 0;
    uint64_t most_calls_ = kDefaultMostCalls;
    std::vector<TimedCall> calls_;
    std::vector<std::vector<Rank>> communicators_;
    std::map<std::vector<Rank>, uint32_t> index_by_members_;
    std::map<int64_t, uint32_t> index_by_id_;  // the rank's communicator ids in the schedule
    uint64_t dropped_ = 0;
};

// The sink of finished rank timelines, in rank order: a Chrome trace, an OTF2 archive.
class TimelineWriter {
public:
    virtual ~TimelineWriter() = default;
    virtual void add(const RankTimeline& rank) = 0;
    // Empty on success, else why the file is not complete.
    virtual std::string finish() = 0;
};

}  // namespace htrace::timeline
