#pragma once
// A timeline as an OTF2 archive (Debian's libotf2), which Vampir, Scalasca and other tools of the
// Score-P family open: one location per rank (a process of its own), a region per MPI or I/O
// operation entered and left around each call, and MPI records inside: a send (MpiSend, at the call's
// start) and a receive (MpiRecv, at its end) where the peer is known, sendrecv both, and a collective
// (MpiCollectiveBegin/End) with its communicator, root and sizes. Point-to-point records are on
// MPI_COMM_WORLD with world ranks, whatever communicator the call used; a non-blocking send or
// receive is recorded at its post, not its completion; I/O calls are regions without I/O records.
// Timestamps are nanoseconds from each rank's origin. Written by one process, serially: the ranks'
// timelines come to it (h-replay gathers them to rank 0).

#include "timeline/rank_timeline.hpp"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace htrace::timeline {

class Otf2ArchiveWriter : public TimelineWriter {
public:
    // Makes the archive `directory`/traces.otf2 (and traces/, traces.def); `title` describes it.
    Otf2ArchiveWriter(const std::string& directory, const std::string& title, int32_t world_size);
    ~Otf2ArchiveWriter() override;
    void add(const RankTimeline& rank) override;
    std::string finish() override;
    // What went wrong so far (a directory that cannot be made, or holds an archive already).
    const std::string& error() const { return error_; }

private:
    struct Archive;
    uint32_t region_of(Op op);
    uint32_t comm_of(const std::vector<Rank>& members);
    void write_definitions();
    void fail(const std::string& what, int code);

    std::unique_ptr<Archive> archive_;
    std::string directory_;
    int32_t world_size_ = 0;
    std::map<Op, uint32_t> regions_;
    std::map<std::vector<Rank>, uint32_t> comms_;  // world is 0
    std::vector<const std::vector<Rank>*> comm_members_;
    std::map<Rank, uint64_t> events_;               // per location (rank)
    uint64_t last_tick_ = 0;
    std::string error_;
    std::string first_error_;  // OTF2's own message of its first error
};

}  // namespace htrace::timeline
