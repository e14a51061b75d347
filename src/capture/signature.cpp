#include "capture/signature.hpp"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstring>
#include <string_view>
#include <unordered_map>

namespace htrace::capture {
namespace {

uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t hash_text(std::string_view s)
{
    uint64_t h = 1469598103934665603ull;  // FNV-1a
    for (char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

// The address range of the module holding this code, so its frames (wrapper, recorder) are
// skipped however the compiler inlined them.
struct OwnModule {
    uintptr_t begin = 0;
    uintptr_t end = 0;

    OwnModule()
    {
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&call_path_signature), &info) == 0) return;
        begin = reinterpret_cast<uintptr_t>(info.dli_fbase);
        dl_iterate_phdr(&find_end, this);
    }

    bool contains(uintptr_t address) const { return address >= begin && address < end; }

    static int find_end(dl_phdr_info* phdr, size_t, void* data)
    {
        auto* self = static_cast<OwnModule*>(data);
        if (phdr->dlpi_addr != self->begin) return 0;
        for (int i = 0; i < phdr->dlpi_phnum; ++i) {
            const auto& segment = phdr->dlpi_phdr[i];
            if (segment.p_type != PT_LOAD || !(segment.p_flags & PF_X)) continue;
            self->end = std::max<uintptr_t>(self->end, phdr->dlpi_addr + segment.p_vaddr + segment.p_memsz);
        }
        return 1;
    }
};

// A frame's address as (module name, offset in the module): the same in every process.
uint64_t relative_frame(uintptr_t address)
{
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || info.dli_fbase == nullptr) return mix(address);
    std::string_view name = info.dli_fname ? info.dli_fname : "";
    if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    return mix(hash_text(name) ^ (address - reinterpret_cast<uintptr_t>(info.dli_fbase)));
}

}  // namespace

uint64_t call_path_signature()
{
    static const OwnModule own;
    constexpr int kMaxFrames = kSignatureDepth + 16;
    void* frames[kMaxFrames];
    const int n = unw_backtrace(frames, kMaxFrames);
    int first = 0;
    while (first < n && own.contains(reinterpret_cast<uintptr_t>(frames[first]))) ++first;
    const int last = std::min(n, first + kSignatureDepth);

    // Raw addresses are stable within the process: resolve each distinct raw path once.
    uint64_t raw = 0x5eed;
    for (int i = first; i < last; ++i) raw = mix(raw ^ reinterpret_cast<uintptr_t>(frames[i]));
    thread_local std::unordered_map<uint64_t, uint64_t> resolved;
    auto found = resolved.find(raw);
    if (found != resolved.end()) return found->second;
    uint64_t signature = 0x51a7;
    for (int i = first; i < last; ++i) {
        // A return address points after the call; step back into the call instruction so the
        // frame names the call site.
        signature = mix(signature ^ relative_frame(reinterpret_cast<uintptr_t>(frames[i]) - 1));
    }
    resolved.emplace(raw, signature);
    return signature;
}

}  // namespace htrace::capture
