#include "capture/python_frames.hpp"

#include "capture/signature.hpp"
#include "trace/hash.hpp"

#include <dlfcn.h>
#include <sys/types.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace htrace::capture {
namespace {

// The few functions of CPython's C API the walk needs, taken from the process (python3 exports
// them; a program that embeds Python links libpython). Objects stay opaque: only functions are
// called, so no structure layout of any Python version is assumed.
struct PythonApi {
    int (*is_initialized)() = nullptr;
    int (*is_finalizing)() = nullptr;  // optional: _Py_IsFinalizing (3.11, 3.12), Py_IsFinalizing (3.13)
    void* (*this_thread_state)() = nullptr;  // PyGILState_GetThisThreadState
    int (*gil_ensure)() = nullptr;
    void (*gil_release)(int) = nullptr;
    void* (*thread_frame)(void*) = nullptr;  // PyThreadState_GetFrame: a new reference or null
    void* (*frame_code)(void*) = nullptr;    // PyFrame_GetCode: a new reference
    void* (*frame_back)(void*) = nullptr;    // PyFrame_GetBack: a new reference or null
    int (*frame_line)(void*) = nullptr;      // PyFrame_GetLineNumber (decodes the line table)
    int (*frame_offset)(void*) = nullptr;    // optional: PyFrame_GetLasti (3.11), the instruction's offset
    void (*error_fetch)(void**, void**, void**) = nullptr;
    void (*error_restore)(void*, void*, void*) = nullptr;
    void (*incref)(void*) = nullptr;
    void (*decref)(void*) = nullptr;
    void* (*get_attribute)(void*, const char*) = nullptr;  // PyObject_GetAttrString
    const char* (*utf8)(void*, ssize_t*) = nullptr;       // PyUnicode_AsUTF8AndSize
};

template <typename Function>
bool find(Function& function, const char* name)
{
    function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, name));
    return function != nullptr;
}

// Null where the process has no CPython: looked up at the first call, then a cached pointer.
const PythonApi* python_api()
{
    static const PythonApi* const api = []() -> const PythonApi* {
        static PythonApi found;
        const bool complete =
            find(found.is_initialized, "Py_IsInitialized") &&
            find(found.this_thread_state, "PyGILState_GetThisThreadState") &&
            find(found.gil_ensure, "PyGILState_Ensure") && find(found.gil_release, "PyGILState_Release") &&
            find(found.thread_frame, "PyThreadState_GetFrame") && find(found.frame_code, "PyFrame_GetCode") &&
            find(found.frame_back, "PyFrame_GetBack") && find(found.frame_line, "PyFrame_GetLineNumber") &&
            find(found.error_fetch, "PyErr_Fetch") && find(found.error_restore, "PyErr_Restore") &&
            find(found.incref, "Py_IncRef") && find(found.decref, "Py_DecRef") &&
            find(found.get_attribute, "PyObject_GetAttrString") && find(found.utf8, "PyUnicode_AsUTF8AndSize");
        if (!find(found.is_finalizing, "Py_IsFinalizing")) find(found.is_finalizing, "_Py_IsFinalizing");
        find(found.frame_offset, "PyFrame_GetLasti");
        return complete ? &found : nullptr;
    }();
    return api;
}

enum class CodeKind : uint8_t {
    program,        // counts in the signature
    import_system,  // CPython's importlib and zipimport, frozen into the interpreter
    mpi4py,         // mpi4py's own Python files (mpi4py.run, mpi4py.futures, mpi4py.util)
};

// What the walk needs of a code object, worked out once: the hash of its file's base name and its
// function's qualified name (the same in every rank, unlike the object's address), its kind, and
// the lines of the instructions last seen calling out of it (finding a line decodes the code's line
// table from its start: most of a walk's time where it is not kept).
constexpr size_t kLines = 8;
struct CodeEntry {
    void* code = nullptr;  // holds a reference, so the address is not reused for another code object
    uint64_t hash = 0;
    CodeKind kind = CodeKind::program;
    std::array<int32_t, kLines> offsets{};  // an instruction's offset + 1 (0: none)
    std::array<int32_t, kLines> lines{};
};

// Calls `use` with the code attribute `name` as text (empty where it has none; the error that
// leaves is the walk's to drop), while the attribute's object is held.
template <typename Use>
void with_code_text(const PythonApi& api, void* code, const char* name, Use use)
{
    void* object = api.get_attribute(code, name);
    ssize_t size = 0;
    const char* text = object == nullptr ? nullptr : api.utf8(object, &size);
    use(text == nullptr ? std::string_view{} : std::string_view(text, static_cast<size_t>(size)));
    if (object != nullptr) api.decref(object);
}

CodeEntry describe_code(const PythonApi& api, void* code)
{
    CodeEntry entry;
    entry.code = code;
    uint64_t hash = kTextHashStart;
    with_code_text(api, code, "co_filename", [&](std::string_view file) {
        if (file.starts_with("<frozen importlib.") || file == "<frozen zipimport>") {
            entry.kind = CodeKind::import_system;
        } else if (file.find("/mpi4py/") != std::string_view::npos) {
            entry.kind = CodeKind::mpi4py;
        }
        const size_t slash = file.rfind('/');
        hash = hash_text(slash == std::string_view::npos ? file : file.substr(slash + 1), hash);
    });
    hash = hash_text("/", hash);
    bool named = false;
    with_code_text(api, code, "co_qualname", [&](std::string_view function) {  // 3.11 and later
        named = !function.empty();
        hash = hash_text(function, hash);
    });
    if (!named) with_code_text(api, code, "co_name", [&](std::string_view function) { hash = hash_text(function, hash); });
    entry.hash = hash;
    return entry;
}

// Per thread, direct-mapped, made on the thread's first Python call. A thread that ends keeps its
// entries' references: a few code objects stay alive.
constexpr size_t kCodeEntries = 512;
thread_local CodeEntry* code_entries = nullptr;
thread_local CodeEntry uncached;  // where no table could be had: described on every call

CodeEntry& code_entry(const PythonApi& api, void* code)
{
    if (code_entries == nullptr) code_entries = static_cast<CodeEntry*>(std::calloc(kCodeEntries, sizeof(CodeEntry)));
    if (code_entries == nullptr) {
        uncached = describe_code(api, code);
        uncached.code = nullptr;  // holds no reference
        return uncached;
    }
    CodeEntry& slot = code_entries[(reinterpret_cast<uintptr_t>(code) >> 4) % kCodeEntries];
    if (slot.code == code) return slot;
    if (slot.code != nullptr) api.decref(slot.code);
    slot = describe_code(api, code);
    api.incref(code);
    return slot;
}

// The line `frame` (running `entry`'s code) is at.
int32_t line_of(const PythonApi& api, CodeEntry& entry, void* frame)
{
    if (api.frame_offset == nullptr) return api.frame_line(frame);
    const int32_t offset = api.frame_offset(frame);
    const size_t slot = static_cast<size_t>(offset >> 1) % kLines;  // offsets step by 2-byte code units
    if (offset < 0 || entry.offsets[slot] != offset + 1) {
        entry.lines[slot] = api.frame_line(frame);
        entry.offsets[slot] = offset < 0 ? 0 : offset + 1;
    }
    return entry.lines[slot];
}

// The walk itself, with the GIL held.
PythonCallSite walk(const PythonApi& api, void* thread_state)
{
    void* type = nullptr;
    void* value = nullptr;
    void* traceback = nullptr;
    api.error_fetch(&type, &value, &traceback);  // the application's, if any: put back below

    PythonCallSite site;
    uint64_t signature = 0x9f7a;
    int depth = 0;
    bool innermost = true;
    void* frame = api.thread_frame(thread_state);
    while (frame != nullptr && depth < kSignatureDepth) {
        void* code = api.frame_code(frame);
        CodeEntry& entry = code_entry(api, code);
        api.decref(code);
        if (innermost) site.importing = entry.kind == CodeKind::import_system;
        innermost = false;
        if (entry.kind == CodeKind::program) {
            const auto line = static_cast<uint64_t>(static_cast<uint32_t>(line_of(api, entry, frame)));
            signature = mix64(signature ^ entry.hash ^ (line * 0x9E3779B97F4A7C15ull));
            ++depth;
        }
        void* back = api.frame_back(frame);
        api.decref(frame);
        frame = back;
    }
    if (frame != nullptr) api.decref(frame);
    if (depth > 0) site.signature = signature == 0 ? 1 : signature;

    void* ours[3] = {nullptr, nullptr, nullptr};
    api.error_fetch(&ours[0], &ours[1], &ours[2]);  // whatever the walk left, dropped
    for (void* object : ours) {
        if (object != nullptr) api.decref(object);
    }
    api.error_restore(type, value, traceback);
    return site;
}

}  // namespace

std::atomic<bool> python_detail::absent{false};

PythonCallSite python_call_site()
{
    const PythonApi* api = python_api();
    if (api == nullptr) {
        python_detail::absent.store(true, std::memory_order_relaxed);
        return {};
    }
    // At exit (mpi4py finalizes MPI after the interpreter is gone) and while the interpreter is
    // finalizing, when taking the GIL would end a thread other than the main one.
    if (!api->is_initialized() || (api->is_finalizing != nullptr && api->is_finalizing())) return {};
    // Not a thread of the interpreter (the MPI library's, the tracer's): no Python frames, and
    // PyGILState_Ensure would make it one.
    void* thread_state = api->this_thread_state();
    if (thread_state == nullptr) return {};
    const int gil = api->gil_ensure();
    const PythonCallSite site = walk(*api, thread_state);
    api->gil_release(gil);
    return site;
}

}  // namespace htrace::capture
