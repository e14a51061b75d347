#pragma once
// A process-wide store, for h-replay-smpi only. SMPI loads h-replay-smpi once per simulated rank
// (a copy of the file for each, under its default dlopen privatization), so each rank has globals of
// its own; the shared libraries it depends on are loaded once for the whole simulation. This one is
// such a library (libhtrace_smpi_holder.so): what it holds, every rank sees.
//
// It knows nothing of traces: a rank's copy of the replay code makes the object and reads it; the
// holder only keeps its address. Every copy is the same code, so each reads the object alike.

#include <functional>
#include <string>

namespace htrace::replay {

// The object held under `key`, made by `make` on the first call with that key (under a lock, in case
// SimGrid runs ranks in threads) and kept until the process ends. An exception from `make` leaves
// nothing held, so a later call tries again.
const void* hold_once(const std::string& key, const std::function<const void*()>& make);

}  // namespace htrace::replay
