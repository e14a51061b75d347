#include "capture/signature.hpp"

#include "trace/hash.hpp"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace htrace::capture {
namespace {

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
        if (dladdr(reinterpret_cast<void*>(&hash_text), &info) == 0) return;
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
    if (dladdr(reinterpret_cast<void*>(address), &info) == 0 || info.dli_fbase == nullptr) return mix64(address);
    std::string_view name = info.dli_fname ? info.dli_fname : "";
    if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    return mix64(hash_text(name) ^ (address - reinterpret_cast<uintptr_t>(info.dli_fbase)));
}

struct Frame {
    uintptr_t ip;
    uintptr_t sp;
};

// Unwinds from here: the application's frames, from the one that called the wrapper outwards.
std::vector<Frame> application_frames(CallSite site)
{
    static const OwnModule own;
    unw_context_t context;
    unw_cursor_t cursor;
    std::vector<Frame> frames;
    if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return frames;
    bool reached = false;
    for (int guard = 0; guard < 256 && unw_step(&cursor) > 0; ++guard) {
        unw_word_t ip = 0;
        unw_word_t sp = 0;
        unw_get_reg(&cursor, UNW_REG_IP, &ip);
        unw_get_reg(&cursor, UNW_REG_SP, &sp);
        // The first frame outside the tracer is the caller; the wrapper's own return address
        // confirms it where the unwinder and the compiler agree.
        if (!reached) {
            if (ip != site.return_address && own.contains(ip)) continue;
            reached = true;
        }
        frames.push_back({ip, sp});
        if (frames.size() == kSignatureDepth) break;
    }
    return frames;
}

// A call path seen before: where the return addresses of its frames after the first lie, relative
// to the call's frame address, and what they were. Fixed size: looked up on every call.
struct CachedPath {
    uint64_t key = 0;
    uint64_t signature = 0;
    bool verifiable = false;
    int slot_count = 0;
    std::array<std::pair<uintptr_t, uintptr_t>, kSignatureDepth> slots;
};

uint64_t signature_of(const std::vector<Frame>& frames)
{
    uint64_t signature = 0x51a7;
    for (const auto& frame : frames) {
        // A return address points after the call; step back into the call instruction so the
        // frame names the call site.
        signature = mix64(signature ^ relative_frame(frame.ip - 1));
    }
    return signature;
}

}  // namespace

uint64_t call_path_signature(CallSite site)
{
    // libunwind's cache of unwind information, per thread: no lock on the way.
    thread_local const bool cache_ready = unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) == 0;
    (void)cache_ready;
    // Two ways per set, chosen by the call site. With one, two hot call sites that fell into the same
    // entry evicted each other on every call and unwound every time: 1 run in 10 of the convergence
    // test program (its stack addresses differ from run to run) was traced 30 times slower.
    constexpr size_t kSets = 128;
    thread_local std::array<std::array<CachedPath, 2>, kSets> paths;
    thread_local std::array<uint8_t, kSets> last_used{};

    const uint64_t key = mix64(site.return_address ^ mix64(site.frame)) | 1;  // 0 marks an empty entry
    const size_t set = (key >> 1) % kSets;  // not the low bit, always 1
    auto& ways = paths[set];
#if defined(__x86_64__)
    for (uint8_t way = 0; way < 2; ++way) {
        const CachedPath& path = ways[way];
        if (path.key != key || !path.verifiable) continue;
        bool same = true;
        for (int i = 0; i < path.slot_count && same; ++i) {
            same = *reinterpret_cast<const uintptr_t*>(site.frame + path.slots[size_t(i)].first) ==
                   path.slots[size_t(i)].second;
        }
        if (same) {
            last_used[set] = way;
            return path.signature;
        }
    }
#endif
    // A new path replaces its call site's old one, else the way not used last.
    const uint8_t way = ways[0].key == key ? 0 : ways[1].key == key ? 1 : uint8_t(1 - last_used[set]);
    last_used[set] = way;
    CachedPath& path = ways[way];
    const std::vector<Frame> frames = application_frames(site);
    path.key = key;
    path.signature = signature_of(frames);
    path.verifiable = false;
    path.slot_count = 0;
#if defined(__x86_64__)
    // A call pushes its return address just below the caller's stack pointer, which is what the
    // unwinder reports as the caller frame's SP.
    path.verifiable = !frames.empty() && frames[0].ip == site.return_address && frames[0].sp == site.frame;
    for (size_t i = 1; i < frames.size() && path.verifiable; ++i) {
        if (frames[i].sp < site.frame + 8) {
            path.verifiable = false;
            break;
        }
        path.slots[size_t(path.slot_count++)] = {frames[i].sp - 8 - site.frame, frames[i].ip};
    }
#endif
    return path.signature;
}

}  // namespace htrace::capture
