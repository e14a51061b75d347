#include "replay/compute.hpp"

#include <chrono>

namespace htrace::replay {

// Computation is re-enacted by spinning, not sleeping: the application kept its core busy too, and a
// sleep's wake-up latency would dwarf the microsecond gaps between calls.
void compute_for(double seconds)
{
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (Clock::now() < until) {
    }
}

}  // namespace htrace::replay
