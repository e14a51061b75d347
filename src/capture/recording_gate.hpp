#pragma once
// Where the application's thread, adding a call to the tracer's state, meets the partial writer's
// thread, which copies that state a few times per run at most (early_end.hpp). The application's
// side is on every call, so it takes no lock and does no atomic read-modify-write: it raises a flag
// and reads another, plain loads and stores. The writer's side pays for both: it asks the kernel
// (membarrier) to run a full memory barrier on every thread of the process, after which a call in
// progress is visible to it and any call not yet in sees it waiting (Dekker's handshake with the
// fence moved to the rare side). Where the kernel has no membarrier, the application's side fences
// itself.
//
// One application thread inside at a time: a program that calls MPI from several threads at once
// (MPI_THREAD_MULTIPLE) serializes them with a mutex of its own around enter() and leave().

#include <atomic>

namespace htrace::capture {

class RecordingGate {
public:
    // Once, before any thread enters: uses the kernel's membarrier (registered when the library was
    // loaded, or now), or falls back.
    void prepare();

    // The application's side, around each call added.
    void enter() noexcept
    {
        for (;;) {
            inside_.store(true, std::memory_order_relaxed);
            if (fence_on_enter_) {
                std::atomic_thread_fence(std::memory_order_seq_cst);
            } else {
                std::atomic_signal_fence(std::memory_order_seq_cst);  // the writer's membarrier is the fence
            }
            if (!closed_.load(std::memory_order_acquire)) return;
            inside_.store(false, std::memory_order_release);
            wait_while_closed();
        }
    }
    void leave() noexcept { inside_.store(false, std::memory_order_release); }

    // The writer's side: waits for the call in progress and keeps new ones out until open().
    void close() noexcept;
    void open() noexcept { closed_.store(false, std::memory_order_release); }

private:
    void wait_while_closed() const noexcept;

    std::atomic<bool> inside_{false};
    std::atomic<bool> closed_{false};
    bool fence_on_enter_ = true;  // until prepare() has the kernel's barrier
};

// The application's side for a scope.
class InsideGate {
public:
    explicit InsideGate(RecordingGate& gate) noexcept : gate_(gate) { gate_.enter(); }
    ~InsideGate() { gate_.leave(); }
    InsideGate(const InsideGate&) = delete;
    InsideGate& operator=(const InsideGate&) = delete;

private:
    RecordingGate& gate_;
};

// The writer's side for a scope.
class ClosedGate {
public:
    explicit ClosedGate(RecordingGate& gate) noexcept : gate_(gate) { gate_.close(); }
    ~ClosedGate() { gate_.open(); }
    ClosedGate(const ClosedGate&) = delete;
    ClosedGate& operator=(const ClosedGate&) = delete;

private:
    RecordingGate& gate_;
};

}  // namespace htrace::capture
