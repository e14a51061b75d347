#include "replay/compute.hpp"

#include <chrono>

namespace htrace::replay {
namespace {

using Clock = std::chrono::steady_clock;
Clock::time_point last_return = Clock::now();  // one replaying rank per process

}  // namespace

void call_returned() { last_return = Clock::now(); }

double clock_seconds() { return std::chrono::duration<double>(Clock::now().time_since_epoch()).count(); }

// Computation is re-enacted by spinning, not sleeping: the application kept its core busy too, and a
// sleep's wake-up latency would dwarf the microsecond gaps between calls.
void compute_for(double seconds)
{
    if (seconds < kShortestSpunComputation) return;
    const auto until = last_return + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
    }
}

}  // namespace htrace::replay
