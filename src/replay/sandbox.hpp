#pragma once
// Where replay puts a file the trace names: always inside the sandbox directory, whatever the name
// (absolute, with `..`, through symbolic links). Pure file-system path logic, no MPI.

#include <string>

namespace htrace::replay {

// `name` (as the trace holds it, for this rank) inside the existing directory `sandbox`: its path
// with empty, `.` and `..` parts left out. Directories on the way are made; where one of them, or
// the file itself, is a symbolic link (planted in a sandbox given with --io-dir), the name is
// flattened into one file name directly in the sandbox instead.
std::string sandboxed_path(const std::string& sandbox, const std::string& name);

}  // namespace htrace::replay
