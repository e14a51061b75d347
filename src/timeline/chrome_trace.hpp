#pragma once
// A timeline as a Chrome trace (the trace-event JSON that Perfetto and chrome://tracing open): one
// process, one thread per rank named "rank N", one complete event ("ph": "X") per call with its
// operation as the name, "MPI" or "I/O" as the category and the peer, tag, bytes, communicator size,
// root and call site as arguments. Times in microseconds from each rank's origin.

#include "timeline/rank_timeline.hpp"

#include <ostream>
#include <string>

namespace htrace::timeline {

class ChromeTraceWriter : public TimelineWriter {
public:
    // `title` names the process (the traced command line).
    ChromeTraceWriter(std::ostream& out, const std::string& title);
    void add(const RankTimeline& rank) override;
    std::string finish() override;

private:
    std::ostream& out_;
};

}  // namespace htrace::timeline
