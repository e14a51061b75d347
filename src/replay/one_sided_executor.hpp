#pragma once
// Issues the one-sided calls of a schedule (replay/schedule.hpp, CallKind::one_sided and the window
// collectives) on windows of the recorded sizes, with scratch data: every access at displacement 0
// (a dynamic window's attached memory), in MPI_BYTE, or one integer of the recorded size for
// Fetch_and_op and Compare_and_swap.

#include "replay/schedule.hpp"

#include <mpi.h>

#include <memory>
#include <unordered_map>
#include <vector>

namespace htrace::replay {

class Windows {
public:
    Windows() = default;
    ~Windows();
    Windows(const Windows&) = delete;
    Windows& operator=(const Windows&) = delete;

    // Creates (on `comm`), frees or fences the call's window.
    void collective(const ScheduledCall& call, MPI_Comm comm);
    // A one-sided call; `origin` and `result` hold at least the call's bytes, and `request` receives
    // the request of Rput and its kin.
    void issue(const ScheduledCall& call, char* origin, char* result, MPI_Request* request);

private:
    struct Window {
        MPI_Win win = MPI_WIN_NULL;
        std::unique_ptr<char[]> memory;  // Win_create's and a dynamic window's
        std::vector<MPI_Aint> bases;     // a dynamic window: where each rank attached its memory
        // A dynamic window: the memory the program attached besides, oldest first (detached so).
        std::vector<std::unique_ptr<char[]>> attached;
    };
    Window& find(int64_t id);
    static bool issue_window_call(const ScheduledCall& call, Window& w, int target);

    std::unordered_map<int64_t, Window> windows_;
};

}  // namespace htrace::replay
