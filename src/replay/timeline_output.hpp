#pragma once
// The replay's timeline (h-replay --chrome-trace, --otf2, and the wait states of --report-json):
// each rank records the calls it issues (Executor::record_into), then rank 0 gathers the ranks'
// timelines one at a time, through PMPI on a communicator of its own, writes the files and finds the
// wait states. Rank 0 opens the files before the replay starts, so a path it cannot write stops the
// job at once rather than after it.

#include "timeline/chrome_trace.hpp"
#include "timeline/rank_timeline.hpp"
#include "timeline/wait_states.hpp"

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace htrace::replay {

class TimelineOutput {
public:
    // Nothing is recorded where both paths are empty and no wait states are asked for.
    TimelineOutput(const std::string& chrome_trace, const std::string& otf2_dir, bool wait_states,
                   const std::string& title, int rank, int size);
    ~TimelineOutput();

    // Rank 0's: a file it could not open (empty elsewhere).
    const std::string& open_error() const { return error_; }
    // Where this rank records its calls; null when no timeline was asked for.
    timeline::RankTimeline* timeline() { return timeline_ ? &*timeline_ : nullptr; }
    // Collective over the world: the ranks' timelines to rank 0, which writes them. Rank 0 gets what
    // went wrong (empty on success), and says on stderr how many calls the timeline left out.
    std::string write(int rank, int size);
    // Rank 0's, after write(): the wait states as JSON (timeline::WaitStates::json), or "null".
    std::string wait_states_json() const;

private:
    std::optional<timeline::RankTimeline> timeline_;
    std::string chrome_trace_;
    std::ofstream chrome_file_;
    std::vector<std::unique_ptr<timeline::TimelineWriter>> writers_;  // rank 0's
    timeline::WaitStates* wait_states_ = nullptr;                     // one of them, if asked for
    bool files_ = false;
    std::string error_;
};

}  // namespace htrace::replay
