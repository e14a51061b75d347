#pragma once
// Call sites of Python programs (mpi4py): when the process runs CPython, a call made by Python code
// is named by the Python frames that made it (file, function and line), not by the interpreter's C
// frames, which are the same for every call. The interpreter's functions are found with dlsym, so
// the tracer does not link libpython and a process without Python pays one test of a cached flag.

#include "capture/signature.hpp"

#include <atomic>
#include <cstdint>

namespace htrace::capture {

struct PythonCallSite {
    uint64_t signature = 0;  // 0: not made by Python code (the C call path names it)
    bool importing = false;  // made by the import system itself (reading or caching a module)
};

// Where the running Python code made this call: the innermost Python frames (at most
// kSignatureDepth, those of CPython's import system and of mpi4py's own Python files skipped), each
// as the base name of its file, its function's qualified name and its line. Empty when the process
// does not run CPython, the interpreter is not (or no longer) initialized, or the calling thread is
// not one of the interpreter's. Takes the GIL for the walk where the thread released it (mpi4py
// releases it around most MPI calls), so it must not be called while holding a lock a Python
// thread could wait for. Leaves the thread's Python error state as it found it.
PythonCallSite python_call_site();

namespace python_detail {
// Set by the first call that finds no CPython in the process.
extern std::atomic<bool> absent;
}  // namespace python_detail

// False once the process is known to have no CPython: the one test a call pays then.
inline bool python_possible() { return !python_detail::absent.load(std::memory_order_relaxed); }

// A call's signature: its Python call site's where Python code made it, else its C call path's.
inline uint64_t call_signature(const PythonCallSite& python, CallSite site)
{
    return python.signature != 0 ? python.signature : call_path_signature(site);
}

}  // namespace htrace::capture
