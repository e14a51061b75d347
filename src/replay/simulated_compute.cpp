#include "replay/compute.hpp"

#include <simgrid/engine.h>
#include <smpi/smpi.h>
#include <xbt/config.h>

namespace htrace::replay {
namespace {

// SMPI times the host CPU a rank spends between two MPI calls and, while smpi/simulate-computation
// is on (its default), adds that time to the rank's simulated clock when the next MPI call starts
// (smpi_bench_end). In h-replay-smpi that host time is h-replay walking the trace, not the
// application computing: only compute_for may move a rank's clock between calls. So the option is
// switched off for the whole simulation when the program is loaded -- SMPI loads it (once per rank
// under privatization) before any rank's main runs -- whatever the command line asked for, and a
// plain `smpirun -platform P -np N h-replay-smpi trace.h` gives the replay's own time.
struct InterpretationTakesNoSimulatedTime {
    InterpretationTakesNoSimulatedTime() { sg_cfg_set_boolean("smpi/simulate-computation", "no"); }
};
const InterpretationTakesNoSimulatedTime interpretation_takes_no_simulated_time;

}  // namespace

// h-replay's own work takes no simulated time (above): nothing to count from.
void call_returned() {}

double clock_seconds() { return simgrid_get_clock(); }

// smpi_execute_benched, not smpi_execute: smpi_execute converts seconds of the machine running the
// simulation (smpi/host-speed) and drops anything below smpi/cpu-threshold, whereas recorded seconds
// are the traced machine's and must all count. smpi_execute_benched runs seconds x the simulated
// host's speed in flops: exactly `seconds` on a host the rank has to itself.
void compute_for(double seconds)
{
    smpi_execute_benched(seconds);
}

}  // namespace htrace::replay
