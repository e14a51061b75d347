// Built into the tracer for SimGrid only (libhtrace-smpi.a).
#include "capture/simulation.hpp"

#include <xbt/config.hpp>

#include <string>

namespace htrace::capture {

bool ranks_share_globals()
{
    return simgrid::config::get_value<std::string>("smpi/privatization") == "no";
}

}  // namespace htrace::capture
