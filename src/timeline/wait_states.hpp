#pragma once
// Wait states, as Scalasca defines them, from every rank's timeline of one run (a replay, real or
// simulated): time a call spent waiting for a late partner.
//
//   - late sender: a blocking receive (MPI_Recv, a sendrecv's receive) entered before its message's
//     send was: from its start to the send's, at most the receive's own time;
//   - late receiver: a synchronous send (MPI_Ssend) entered before its receive was posted: from its
//     start to the receive's, at most the send's own time;
//   - wait at a collective: a blocking collective (or communicator creation) entered before the
//     partners it must wait for: all of them for barrier-like and all-to-all ones (until the last
//     arrives), the root for one-to-all ones (MPI_Bcast, MPI_Scatter), and, at the root of an
//     all-to-one (MPI_Gather, MPI_Reduce), the last of the others; at most the call's own time.
//
// Messages pair by sender, receiver and tag in the order each rank made its calls (MPI's
// non-overtaking order; communicators are not told apart, which errs only where two communicators
// carry the same tag between one pair at once). Non-blocking calls and their completions are left
// out: a wait in MPI_Wait is not attributed.

#include "timeline/rank_timeline.hpp"

#include <array>
#include <map>
#include <string>
#include <vector>

namespace htrace::timeline {

enum class WaitKind : uint8_t { late_sender, late_receiver, wait_at_collective };
inline constexpr size_t kWaitKinds = 3;
const char* wait_kind_name(WaitKind kind);

class WaitStates : public TimelineWriter {
public:
    void add(const RankTimeline& rank) override;
    std::string finish() override;

    // Seconds waited per kind, by world rank (after finish()).
    const std::vector<std::array<double, kWaitKinds>>& per_rank() const { return per_rank_; }
    struct Site {
        uint64_t signature = 0;
        Op op{};
        WaitKind kind{};
        double seconds = 0;  // all ranks together
        uint32_t ranks = 0;  // that waited there
        Rank most_rank = -1;  // the rank that waited the longest there
        double most = 0;
    };
    // The call sites that waited, longest first.
    const std::vector<Site>& sites() const { return sites_; }
    // {"calls": the calls looked at, "calls_left_out": those the timelines did not keep (their waits are
    // missing), "total": {kind: seconds}, "per_rank": [{"rank", kinds...}], "sites": [the first `top`]}
    std::string json(size_t top) const;

private:
    struct Call {
        Rank rank = 0;
        Op op{};
        double start = 0, end = 0;
        uint64_t signature = 0;
        int32_t root = -1;  // collectives: the root's world rank
    };
    void wait(const Call& call, WaitKind kind, double until);

    // Sends and receives by (sender, receiver, tag), in each rank's order.
    std::map<std::array<int64_t, 3>, std::vector<Call>> sends_, receives_;
    // A collective's instances: by (communicator, the k-th blocking collective its members made on it).
    std::map<std::pair<uint32_t, uint64_t>, std::vector<Call>> collectives_;
    std::map<std::vector<Rank>, uint32_t> communicators_;
    std::vector<std::array<double, kWaitKinds>> per_rank_;
    std::map<std::tuple<uint64_t, Op, WaitKind>, std::map<Rank, double>> by_site_;
    std::vector<Site> sites_;
    uint64_t calls_ = 0;
    uint64_t calls_left_out_ = 0;
};

}  // namespace htrace::timeline
