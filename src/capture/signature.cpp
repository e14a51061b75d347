#include "capture/signature.hpp"

#include "capture/simulation.hpp"

#include "trace/hash.hpp"
#include "trace/hot_path.hpp"

#include <unwind.h>

#include <dlfcn.h>
#include <errno.h>  // program_invocation_name
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace htrace::capture {
namespace {

// SimGrid loads a copy of the program for every simulated rank, named PROGRAM_PID_RANK.so: all
// copies are one module, PROGRAM.
std::string_view simulated_program_name(std::string_view name)
{
    if (!name.ends_with(".so")) return name;
    std::string_view stem = name.substr(0, name.size() - 3);
    for (int number = 0; number < 2; ++number) {
        const size_t underscore = stem.rfind('_');
        if (underscore == std::string_view::npos || underscore + 1 == stem.size()) return name;
        if (!std::all_of(stem.begin() + underscore + 1, stem.end(), [](char c) { return c >= '0' && c <= '9'; })) {
            return name;
        }
        stem = stem.substr(0, underscore);
    }
    return stem;
}

uint64_t module_frame(std::string_view name, uintptr_t address, uintptr_t module_start)
{
    if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
    if (kSimulatedRun) name = simulated_program_name(name);
    return mix64(hash_text(name) ^ (address - module_start));
}

// The address range of the module holding this code, so its frames (wrapper, recorder) are
// skipped however the compiler inlined them.
struct OwnModule {
    uintptr_t begin = 0;
    uintptr_t end = 0;

    OwnModule()
    {
        Dl_info info{};
        if (dladdr(reinterpret_cast<void*>(&module_frame), &info) == 0) return;
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

// The loaded object holding `address`, and where it starts (dladdr's dli_fbase).
struct LoadedModule {
    const link_map* map = nullptr;
    uintptr_t start = 0;
};

LoadedModule module_of(uintptr_t address)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
    // glibc's own lookup for unwinders: a search of the loaded objects' ranges, where dladdr also
    // searches the object's symbols (microseconds for an address in libc, which shallow programs'
    // paths reach, and a microsecond in a Fortran program's own code).
    dl_find_object found{};
    if (_dl_find_object(reinterpret_cast<void*>(address), &found) != 0) return {};
    return {found.dlfo_link_map, reinterpret_cast<uintptr_t>(found.dlfo_map_start)};
#else
    Dl_info info{};
    link_map* map = nullptr;
    if (dladdr1(reinterpret_cast<void*>(address), &info, reinterpret_cast<void**>(&map), RTLD_DL_LINKMAP) == 0) {
        return {};
    }
    return {map, reinterpret_cast<uintptr_t>(info.dli_fbase)};
#endif
}

// A frame's address as (module name, offset in the module): the same in every process. The
// executable's link map has no name; dladdr names it by program_invocation_name, and so do we.
uint64_t relative_frame(uintptr_t address)
{
    const LoadedModule module = module_of(address);
    if (module.map == nullptr || module.start == 0) return mix64(address);
    const char* name = module.map->l_name;
    if (name == nullptr || name[0] == '\0') name = program_invocation_name;
    return module_frame(name ? name : "", address, module.start);
}

struct Frame {
    uintptr_t ip;
    uintptr_t sp;
};

// The walk of application_frames, one frame a callback.
struct FrameWalk {
    const OwnModule* own;
    CallSite site;
    std::vector<Frame> frames;
    bool inside_tracer = false;  // past the unwinder's own frames, in ours
    bool reached = false;        // past ours, in the application's
    int seen = 0;                // frames, against a stack that never ends
};

_Unwind_Reason_Code next_frame(_Unwind_Context* context, void* data)
{
    auto& walk = *static_cast<FrameWalk*>(data);
    const uintptr_t ip = _Unwind_GetIP(context);
    // libgcc's "CFA" of a frame's context is the stack pointer in that frame (the frame it called
    // returns to it), as libunwind's SP was.
    const uintptr_t sp = _Unwind_GetCFA(context);
    if (ip == 0 || ++walk.seen > 256) return _URC_END_OF_STACK;  // ip 0: past the outermost frame (_start)
    if (!walk.reached) {
        // The first frame outside the tracer is the caller; the wrapper's own return address
        // confirms it where the unwinder and the compiler agree.
        const bool ours = walk.own->contains(ip) && ip != walk.site.return_address;
        if (ours || !walk.inside_tracer) {
            walk.inside_tracer = walk.inside_tracer || ours;
            return _URC_NO_REASON;
        }
        walk.reached = true;
    }
    walk.frames.push_back({ip, sp});
    return walk.frames.size() == kSignatureDepth ? _URC_END_OF_STACK : _URC_NO_REASON;
}

// Unwinds from here: the application's frames, from the one that called the wrapper outwards.
// libgcc's unwinder finds each frame's module with glibc's _dl_find_object: no lock and no system
// call, where libunwind's masked every signal and searched all loaded objects at each frame.
std::vector<Frame> application_frames(CallSite site)
{
    static const OwnModule own;
    FrameWalk walk{&own, site, {}};
    walk.frames.reserve(kSignatureDepth);
    _Unwind_Backtrace(next_frame, &walk);
    return walk.frames;
}

// Never 0, which the cache keeps for "not found".
uint64_t signature_of(const std::vector<Frame>& frames)
{
    uint64_t signature = 0x51a7;
    for (const auto& frame : frames) {
        // A return address points after the call; step back into the call instruction so the
        // frame names the call site.
        signature = mix64(signature ^ relative_frame(frame.ip - 1));
    }
    return signature == 0 ? 1 : signature;
}

// The call paths seen before, as a trie over the application's stack: a node is the return
// addresses of a path's first frames, each in its stack slot relative to the call's frame address,
// and says which slot holds the next frame's return address (or, at the last frame, the path's
// signature). A call whose slots hold the same return addresses as a path seen before has that
// path's signature: the walk reads at most kSignatureDepth - 1 slots and does no unwinding. Keying
// every level on what came before is what lets hundreds of paths share a wrapper's caller and its
// stack depth (a helper called from everywhere, a Fortran module procedure, recursion) without
// evicting each other.
struct PathNode {
    uint64_t key = 0;        // of the path so far; 0 marks an empty node
    uintptr_t address = 0;   // the last frame's return address (checked beside the key)
    uint64_t signature = 0;  // on the path's last frame
    int32_t next_slot = 0;   // where the next frame's return address lies, from the call's frame address
    bool last = false;
};

// The key of a path's first frame, and of a path one frame longer. One multiply a level: this is
// the walk of every call. Distinct inputs give distinct keys in practice (64 bits), and the node
// also keeps its frame's return address.
uint64_t first_key(CallSite site)
{
    const uint64_t key = (site.return_address ^ (site.frame * 0x9E3779B97F4A7C15ull)) * 0xD6E8FEB86659FD93ull;
    return key == 0 ? 1 : key;
}

uint64_t next_key(uint64_t key, uintptr_t address)
{
    const uint64_t next = (key + address) * 0x9E3779B97F4A7C15ull;
    return next == 0 ? 1 : next;
}

// A shortcut past the trie's deeper levels, from the key of a path's first two frames: the slots
// and return addresses of the rest of the last path walked with them. A call checks every one of
// them, so a shortcut to another path costs only the walk it would have done anyway. Slots past
// `count` hold the wrapper's own return address, which lies just below the call's frame address on
// every call: a call checks all of them, without a loop of the path's length. Two whole cache lines
// (the table is aligned): a hit reads both and no third.
struct alignas(64) PathTail {
    static constexpr int32_t kWrapperReturnSlot = -8;

    uint64_t key = 0;       // of the first two frames; 0 marks an empty entry
    uintptr_t address = 0;  // the second frame's return address (checked beside the key)
    uint64_t signature = 0;
    uint32_t count = 0;  // frames after the second
    std::array<int32_t, kSignatureDepth - 2> slots{};
    std::array<uintptr_t, kSignatureDepth - 2> addresses{};

    // A shortcut of no frames yet, for a path that reached the wrapper at `site`.
    static PathTail unfilled(CallSite site)
    {
        PathTail tail;
        tail.slots.fill(kWrapperReturnSlot);
        tail.addresses.fill(site.return_address);
        return tail;
    }
};

// Open addressing, per thread (no lock), with the shortcuts direct-mapped beside it. Made on the
// thread's first unwind, small, and doubled (both tables) when three quarters full, up to a limit
// past which it is emptied whole; a lookup always finds an empty node and ends. Small tables matter
// where ranks outnumber cores: each rank's calls find its tables evicted by the others, and a
// program's few hundred paths spread over half a megabyte cost a TLB miss and a page fault per
// lookup where they would fit in a few pages.
class PathCache {
public:
    static constexpr unsigned kFirstNodeBits = 8;  // 256 nodes, 8 KiB, and 256 shortcuts, 32 KiB
    static constexpr unsigned kMaxNodeBits = 13;   // 8192 nodes, 256 KiB (1 MiB of shortcuts); ~1000 paths

    const PathNode* find(uint64_t key, uintptr_t address) const
    {
        for (size_t i = index(key);; i = (i + 1) & mask_) {
            const PathNode& node = nodes_[i];
            if (node.key == key && node.address == address) return &node;
            if (node.key == 0) return nullptr;
        }
    }

    PathTail& tail(uint64_t key) { return tails_[index(key)]; }  // as many shortcuts as nodes

    bool ready() const { return nodes_ != nullptr; }

    // False when no memory could be had: the caller then unwinds every time.
    bool make_ready() { return nodes_ != nullptr || resize(kFirstNodeBits); }

    PathNode& insert(uint64_t key, uintptr_t address)
    {
        if (used_ >= node_count() / 4 * 3 && !(node_bits_ < kMaxNodeBits && resize(node_bits_ + 1))) {
            std::memset(static_cast<void*>(nodes_), 0, node_count() * sizeof(PathNode));
            used_ = 0;
        }
        return slot(key, address);
    }

private:
    static constexpr size_t kLine = 64;
    size_t node_count() const { return size_t(1) << node_bits_; }
    size_t index(uint64_t key) const { return static_cast<size_t>(key >> shift_); }

    PathNode& slot(uint64_t key, uintptr_t address)
    {
        for (size_t i = index(key);; i = (i + 1) & mask_) {
            PathNode& node = nodes_[i];
            if (node.key == key && node.address == address) return node;
            if (node.key == 0) {
                ++used_;
                node.key = key;
                node.address = address;
                return node;
            }
        }
    }

    // Tables of 2^bits nodes and as many shortcuts, holding what the old ones held.
    bool resize(unsigned bits)
    {
        Memory nodes_memory(std::calloc(1, (size_t(1) << bits) * sizeof(PathNode) + kLine));
        Memory tails_memory(std::calloc(1, (size_t(1) << bits) * sizeof(PathTail) + kLine));
        if (nodes_memory == nullptr || tails_memory == nullptr) return false;
        PathNode* const old_nodes = nodes_;
        PathTail* const old_tails = tails_;
        const size_t old_count = nodes_ ? node_count() : 0;
        node_bits_ = bits;
        shift_ = 64 - bits;
        mask_ = node_count() - 1;
        used_ = 0;
        nodes_ = static_cast<PathNode*>(aligned(nodes_memory.get()));
        tails_ = static_cast<PathTail*>(aligned(tails_memory.get()));
        for (size_t i = 0; i < old_count; ++i) {
            if (old_nodes[i].key != 0) slot(old_nodes[i].key, old_nodes[i].address) = old_nodes[i];
            if (old_tails[i].key != 0) tail(old_tails[i].key) = old_tails[i];
        }
        nodes_memory_ = std::move(nodes_memory);
        tails_memory_ = std::move(tails_memory);
        return true;
    }

    static void* aligned(void* memory)
    {
        return reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(memory) + kLine - 1) & ~uintptr_t(kLine - 1));
    }
    struct Free {
        void operator()(void* p) const { std::free(p); }
    };
    using Memory = std::unique_ptr<void, Free>;
    Memory nodes_memory_;
    Memory tails_memory_;
    PathNode* nodes_ = nullptr;  // in nodes_memory_, aligned to a cache line, so a node is one line
    PathTail* tails_ = nullptr;  // in tails_memory_, likewise: a shortcut is two lines
    unsigned node_bits_ = kFirstNodeBits;
    unsigned shift_ = 64 - kFirstNodeBits;  // of a key, to its node's (and its shortcut's) index
    size_t mask_ = 0;
    size_t used_ = 0;
};
static_assert(sizeof(PathNode) == 32 && sizeof(PathTail) == 128);

HTRACE_RANK_LOCAL PathCache path_cache;
HTRACE_RANK_LOCAL SignatureStats stats;

// What the stack holds `offset` bytes from the call's frame address.
uintptr_t stack_slot(CallSite site, int32_t offset)
{
    return *reinterpret_cast<const uintptr_t*>(site.frame + uintptr_t(offset));
}

// Whether `tail` is the shortcut of the path at `site` whose frames so far have `key` and end with
// `address`.
bool shortcut_matches(const PathTail& tail, CallSite site, uint64_t key, uintptr_t address)
{
    if (tail.key != key || tail.address != address) return false;
    uintptr_t differ = 0;
    for (size_t i = 0; i < tail.slots.size(); ++i) differ |= stack_slot(site, tail.slots[i]) ^ tail.addresses[i];
    return differ == 0;
}

// The walk down the trie where no shortcut matched, from the node of the path's first two frames
// (`key`, ending with `address`); it leaves a shortcut to the path. Out of line: rarer, and its
// locals would give every call a larger stack frame to set up.
[[gnu::noinline]] uint64_t walked_signature(CallSite site, uint64_t key, uintptr_t address, PathTail& first,
                                            bool shared)
{
    PathTail walked = PathTail::unfilled(site);
    walked.key = key;
    walked.address = address;
    const PathNode* node = path_cache.find(key, address);
    while (node != nullptr && !node->last) {
        if (walked.count == walked.slots.size()) return 0;  // deeper than any path remembered
        address = stack_slot(site, node->next_slot);
        walked.slots[walked.count] = node->next_slot;
        walked.addresses[walked.count++] = address;
        key = next_key(key, address);
        node = path_cache.find(key, address);
    }
    if (node == nullptr) return 0;
    walked.signature = node->signature;
    if (!shared || walked.count == 0) {
        first = walked;
        return walked.signature;
    }
    // The first two frames' shortcut stays another path's; this one's starts a frame later.
    PathTail later = PathTail::unfilled(site);
    later.address = walked.addresses[0];
    later.key = next_key(walked.key, later.address);
    later.signature = walked.signature;
    later.count = walked.count - 1;
    for (uint32_t i = 0; i < later.count; ++i) {
        later.slots[i] = walked.slots[i + 1];
        later.addresses[i] = walked.addresses[i + 1];
    }
    path_cache.tail(later.key) = later;
    return walked.signature;
}

// The cached signature of the path at `site`, or 0 (no signature is 0: see signature_of). Inlined
// in its one caller: a call's worth of instructions on every MPI call.
[[gnu::always_inline]] inline uint64_t cached_signature(CallSite site)
{
    if (!path_cache.ready()) return 0;
    uint64_t key = first_key(site);
    const PathNode* node = path_cache.find(key, site.return_address);
    if (node == nullptr || node->last) return node == nullptr ? 0 : node->signature;
    const uintptr_t address = stack_slot(site, node->next_slot);
    key = next_key(key, address);
    // Most calls end here: two lookups and a few loads from the stack, all independent.
    PathTail& first = path_cache.tail(key);
    if (shortcut_matches(first, site, key, address)) return first.signature;
    // Paths that share their first two frames (a helper called from a function called from many
    // places) each have a shortcut from their first three; the first two frames' shortcut says
    // where the third frame's return address lies.
    const bool shared = first.key == key && first.address == address && first.count > 0;
    if (shared) {
        const uintptr_t third = stack_slot(site, first.slots[0]);
        const uint64_t third_key = next_key(key, third);
        if (const PathTail& tail = path_cache.tail(third_key); shortcut_matches(tail, site, third_key, third)) {
            return tail.signature;
        }
    }
    return walked_signature(site, key, address, first, shared);
}

// Remembers the path of `frames`, unwound from `site`, if its return addresses can be found again
// in the stack: a call pushes its return address just below the caller's stack pointer, which is
// what the unwinder reports as the caller frame's SP.
void remember(CallSite site, const std::vector<Frame>& frames, uint64_t signature)
{
    if (frames.empty() || frames[0].ip != site.return_address || frames[0].sp != site.frame) return;
    for (size_t i = 1; i < frames.size(); ++i) {
        if (frames[i].sp < site.frame + 8 || frames[i].sp - site.frame > (uintptr_t(1) << 30)) return;
    }
    if (!path_cache.make_ready()) return;
    uint64_t key = first_key(site);
    for (size_t i = 0; i < frames.size(); ++i) {
        if (i > 0) key = next_key(key, frames[i].ip);
        PathNode& node = path_cache.insert(key, frames[i].ip);
        node.last = i + 1 == frames.size();
        // A path that shares these frames but finds its next one elsewhere (a frame of variable
        // size) takes the node over; the other path unwinds again when it comes back.
        node.next_slot = node.last ? 0 : static_cast<int32_t>(frames[i + 1].sp - 8 - site.frame);
        node.signature = node.last ? signature : 0;
    }
}

// The executable's path: the loader gives it no name.
const std::string& executable_path()
{
    static const std::string path = [] {
        char buffer[4096];
        const ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
        return length > 0 ? std::string(buffer, static_cast<size_t>(length))
                          : std::string(program_invocation_name ? program_invocation_name : "");
    }();
    return path;
}

// Each signature's location, kept the first time its path is unwound (rare: a lock is cheap there).
std::mutex locations_mutex;
std::map<uint64_t, SiteLocation> locations;

void remember_location(uint64_t signature, const std::vector<Frame>& frames)
{
    if (frames.empty()) return;
    {
        std::lock_guard lock(locations_mutex);
        if (locations.contains(signature)) return;
    }
    // The call instruction, just before the return address; in the module's own addresses.
    const uintptr_t call = frames[0].ip - 1;
    const link_map* map = module_of(call).map;
    if (map == nullptr) return;
    SiteLocation location;
    location.module = map->l_name && map->l_name[0] != '\0' ? std::string(map->l_name) : executable_path();
    location.address = call - map->l_addr;
    std::lock_guard lock(locations_mutex);
    locations.emplace(signature, std::move(location));
}

// A path not in the cache: unwound, and remembered. Out of line, so that a cached path's call sets
// up none of the unwinder's state.
[[gnu::noinline]] uint64_t unwound_signature(CallSite site)
{
    ++stats.misses;
    const std::vector<Frame> frames = application_frames(site);
    const uint64_t signature = signature_of(frames);
    remember_location(signature, frames);
#if defined(__x86_64__)
    remember(site, frames, signature);
#endif
    return signature;
}

}  // namespace

HTRACE_HOT uint64_t call_path_signature(CallSite site)
{
#if defined(__x86_64__)
    if (const uint64_t signature = cached_signature(site); signature != 0) {
        ++stats.hits;
        return signature;
    }
#endif
    return unwound_signature(site);
}

SignatureStats signature_stats() { return stats; }

std::map<uint64_t, SiteLocation> site_locations()
{
    std::lock_guard lock(locations_mutex);
    return locations;
}

}  // namespace htrace::capture
