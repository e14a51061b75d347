#pragma once
// The last line of defence against a replay that hangs: the schedule is built not to (proofs/), but a
// traced program may have relied on MPI buffering that the library replay runs on does not give, or
// a library may misbehave. When one call of this rank has not returned for `limit` seconds, the
// watchdog prints one line naming the call and the trace event it replays, and ends the process,
// which makes mpirun stop the job.

#include "replay/schedule.hpp"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

namespace htrace::replay {

class Watchdog {
public:
    // `limit` 0: no watchdog.
    Watchdog(int rank, double limit);
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    // Around every call that may block.
    void entering(const ScheduledCall& call);
    void left();

private:
    // What a stuck call is, kept as plain values: the call itself may be gone when it is reported.
    struct InCall {
        uint64_t index = 0;  // 1, 2, ... per call; 0 outside calls
        CallKind kind = CallKind::compute;
        Op op{};
        const Event* event = nullptr;
        Rank peer = -1;
        int64_t tag = 0;
        int64_t bytes = 0;
        int64_t comm = 0;
        size_t requests = 0;
    };
    // The same, as the rank's thread publishes it on every call without a lock (a lock there cost
    // a tenth of a replay of short calls): fields first, then the index. The watchdog reads the
    // fields only of a call whose index has not moved for seconds, and checks it again after.
    struct Published {
        std::atomic<uint64_t> index{0};
        std::atomic<CallKind> kind{CallKind::compute};
        std::atomic<Op> op{};
        std::atomic<const Event*> event{nullptr};
        std::atomic<Rank> peer{-1};
        std::atomic<int64_t> tag{0};
        std::atomic<int64_t> bytes{0};
        std::atomic<int64_t> comm{0};
        std::atomic<size_t> requests{0};
    };

    void watch();
    // The call in progress, if it is still `index`.
    std::optional<InCall> read_current(uint64_t index) const;
    [[noreturn]] void stop(const InCall& call, double seconds) const;

    int rank_;
    double limit_;
    std::mutex mutex_;  // for done_ and the wake-up only
    std::condition_variable wake_;
    bool done_ = false;
    Published current_;
    uint64_t calls_ = 0;  // the rank's thread's own
    std::thread thread_;
};

}  // namespace htrace::replay
