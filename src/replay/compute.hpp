#pragma once
// How recorded computation is re-enacted: one function, with one implementation per way of running
// the replay (busy_compute.cpp on a real machine; the SimGrid build simulates it instead).

namespace htrace::replay {

// Spends `seconds` of computation, as the traced rank did between two calls.
void compute_for(double seconds);

}  // namespace htrace::replay
