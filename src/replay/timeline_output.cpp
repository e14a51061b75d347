#include "replay/timeline_output.hpp"

#ifdef HTRACE_OTF2
#include "timeline/otf2_archive.hpp"
#endif

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>

namespace htrace::replay {

namespace {

// The job's calls a timeline keeps, shared among the ranks (about 100 bytes a call, and as much again
// at rank 0 for the wait states): under SimGrid every rank's timeline is in one process.
#ifdef HTRACE_SIMULATED
constexpr uint64_t kJobTimelineCalls = 10'000'000;
#else
constexpr uint64_t kJobTimelineCalls = 50'000'000;
#endif
constexpr uint64_t kLeastRankTimelineCalls = 10'000;
constexpr int kTimelineTag = 1;
constexpr size_t kChunk = size_t{1} << 30;
// The call sites the report lists by their time waiting.
constexpr size_t kWaitSites = 20;

uint64_t most_calls(int size)
{
    return std::max(kLeastRankTimelineCalls, kJobTimelineCalls / static_cast<uint64_t>(std::max(size, 1)));
}

void send_bytes(const std::string& bytes, MPI_Comm comm)
{
    uint64_t size = bytes.size();
    PMPI_Send(&size, 1, MPI_UINT64_T, 0, kTimelineTag, comm);
    for (size_t sent = 0; sent < bytes.size(); sent += kChunk) {
        const int count = static_cast<int>(std::min(kChunk, bytes.size() - sent));
        PMPI_Send(bytes.data() + sent, count, MPI_BYTE, 0, kTimelineTag, comm);
    }
}

std::string receive_bytes(int from, MPI_Comm comm)
{
    uint64_t size = 0;
    PMPI_Recv(&size, 1, MPI_UINT64_T, from, kTimelineTag, comm, MPI_STATUS_IGNORE);
    std::string bytes(size, '\0');
    for (size_t received = 0; received < bytes.size(); received += kChunk) {
        const int count = static_cast<int>(std::min<size_t>(kChunk, bytes.size() - received));
        PMPI_Recv(bytes.data() + received, count, MPI_BYTE, from, kTimelineTag, comm, MPI_STATUS_IGNORE);
    }
    return bytes;
}

}  // namespace

TimelineOutput::TimelineOutput(const std::string& chrome_trace, const std::string& otf2_dir, bool wait_states,
                               const std::string& title, int rank, int size)
    : chrome_trace_(chrome_trace), files_(!chrome_trace.empty() || !otf2_dir.empty())
{
    if (!files_ && !wait_states) return;
    timeline_.emplace(rank, size, most_calls(size));
    if (rank != 0) return;
    if (wait_states) {
        auto analysis = std::make_unique<timeline::WaitStates>();
        wait_states_ = analysis.get();
        writers_.push_back(std::move(analysis));
    }
    if (!chrome_trace.empty()) {
        chrome_file_.open(chrome_trace);
        if (!chrome_file_) {
            error_ = "--chrome-trace: cannot write " + chrome_trace;
            return;
        }
        writers_.push_back(std::make_unique<timeline::ChromeTraceWriter>(chrome_file_, title));
    }
#ifdef HTRACE_OTF2
    if (!otf2_dir.empty()) {
        auto writer = std::make_unique<timeline::Otf2ArchiveWriter>(otf2_dir, title, size);
        error_ = writer->error();
        writers_.push_back(std::move(writer));
    }
#endif
}

TimelineOutput::~TimelineOutput()
{
    // A Chrome trace left unfinished (the job stopped) is not a file any tool could open.
    if (chrome_file_.is_open()) {
        chrome_file_.close();
        std::remove(chrome_trace_.c_str());
    }
}

std::string TimelineOutput::write(int rank, int size)
{
    if (!timeline_) return {};
    MPI_Comm comm = MPI_COMM_NULL;
    PMPI_Comm_dup(MPI_COMM_WORLD, &comm);
    std::string error;
    if (rank != 0) {
        send_bytes(timeline_->serialize(), comm);
    } else {
        const auto began = std::chrono::steady_clock::now();
        uint64_t kept = 0;
        uint64_t dropped = 0;
        auto add = [&](const timeline::RankTimeline& rank_timeline) {
            kept += rank_timeline.calls().size();
            dropped += rank_timeline.dropped();
            for (auto& writer : writers_) writer->add(rank_timeline);
        };
        add(*timeline_);
        for (int r = 1; r < size; ++r) {
            timeline::RankTimeline received(r, size);
            const std::string problem = timeline::RankTimeline::deserialize(receive_bytes(r, comm), received);
            if (!problem.empty() && error.empty()) error = "rank " + std::to_string(r) + ": " + problem;
            if (problem.empty()) add(received);
        }
        for (auto& writer : writers_) {
            if (std::string problem = writer->finish(); !problem.empty() && error.empty()) error = problem;
        }
        if (dropped > 0) {
            std::fprintf(stderr, "h-replay: the timeline holds %llu calls, at most %llu of each rank; %llu more were "
                         "made and are not in it\n", static_cast<unsigned long long>(kept),
                         static_cast<unsigned long long>(most_calls(size)), static_cast<unsigned long long>(dropped));
        }
        if (chrome_file_.is_open()) {
            chrome_file_.close();
            if (!chrome_file_ && error.empty()) error = "--chrome-trace: cannot write " + chrome_trace_;
            if (!error.empty()) std::remove(chrome_trace_.c_str());
        }
        if (error.empty() && files_) {
            // Host time, also under SimGrid: what gathering and writing cost the user, not the job.
            const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
            std::fprintf(stderr, "h-replay: wrote the timeline of %llu calls in %.3f s\n",
                         static_cast<unsigned long long>(kept), seconds);
        }
    }
    PMPI_Comm_free(&comm);
    return error;
}

std::string TimelineOutput::wait_states_json() const
{
    return wait_states_ != nullptr ? wait_states_->json(kWaitSites) : "null";
}

}  // namespace htrace::replay
