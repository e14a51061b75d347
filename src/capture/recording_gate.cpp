#include "capture/recording_gate.hpp"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace htrace::capture {
namespace {

int membarrier(int command) { return static_cast<int>(syscall(__NR_membarrier, command, 0, 0)); }

// Both sides wait rarely and briefly (a part copied, a call added): sleeping keeps the core for
// the other, which on an oversubscribed node is the one that must finish.
void pause_briefly() { std::this_thread::sleep_for(std::chrono::microseconds(50)); }

bool register_with_membarrier()
{
    const int supported = membarrier(MEMBARRIER_CMD_QUERY);
    return supported > 0 && (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
           membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
}

// Registering waits for the kernel's grace period (10-20 ms) once the process has threads, which
// MPI_Init starts: the library registers as it is loaded, while the process has one thread yet.
const bool registered_at_load = register_with_membarrier();

}  // namespace

void RecordingGate::prepare()
{
    fence_on_enter_ = !(registered_at_load || register_with_membarrier());
}

void RecordingGate::close() noexcept
{
    closed_.store(true, std::memory_order_seq_cst);
    if (!fence_on_enter_) membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    while (inside_.load(std::memory_order_acquire)) pause_briefly();
}

void RecordingGate::wait_while_closed() const noexcept
{
    while (closed_.load(std::memory_order_acquire)) pause_briefly();
}

}  // namespace htrace::capture
