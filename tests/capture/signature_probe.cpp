// Prints the signatures of two call sites (one of them reached twice) and the raw address of
// one of them, so a test can compare them across runs under ASLR.
#include <cinttypes>
#include <cstdint>
#include <cstdio>

extern "C" uint64_t probe_signature();
extern "C" void probe_stats(uint64_t* hits, uint64_t* misses);

__attribute__((noinline)) uint64_t site_a() { return probe_signature(); }
__attribute__((noinline)) uint64_t site_b() { return probe_signature(); }
__attribute__((noinline)) uint64_t through_helper() { return site_a(); }

// One call site reached at the same stack depth by four paths that part one or three frames up: the frame
// that calls and its stack pointer are the same on every path, only deeper return addresses differ.
volatile int sink;
__attribute__((noinline)) uint64_t shared() { const uint64_t s = probe_signature(); sink = 1; return s; }
__attribute__((noinline)) uint64_t caller_x() { const uint64_t s = shared(); sink = 2; return s; }
__attribute__((noinline)) uint64_t caller_y() { const uint64_t s = shared(); sink = 3; return s; }
__attribute__((noinline)) uint64_t middle(uint64_t (*next)()) { const uint64_t s = next(); sink = 4; return s; }
__attribute__((noinline)) uint64_t outer_x() { const uint64_t s = middle(&caller_x); sink = 5; return s; }
__attribute__((noinline)) uint64_t outer_y() { const uint64_t s = middle(&caller_x); sink = 6; return s; }

int main(int argc, char**)
{
    uint64_t a[2];
    // A loop the compiler cannot unroll, so both calls come from one call site.
    for (int i = 0; i < argc + 1; ++i) a[i % 2] = site_a();
    std::printf("a=%016" PRIx64 " a_again=%016" PRIx64 " b=%016" PRIx64 " a_via_helper=%016" PRIx64 " main=%p\n",
                a[0], a[1], site_b(), through_helper(), reinterpret_cast<void*>(&site_b));
    // The four paths through shared(), interleaved: each keeps one signature, each differs from the
    // others, and after its first call every one is found in the cache.
    uint64_t hits = 0, misses = 0;
    probe_stats(&hits, &misses);
    const uint64_t misses_before = misses, hits_before = hits;
    constexpr int kRounds = 1000;
    uint64_t first[4] = {}, changed = 0;
    for (int i = 0; i < kRounds; ++i) {
        const uint64_t s[4] = {caller_x(), caller_y(), outer_x(), outer_y()};
        for (int k = 0; k < 4; ++k) {
            if (i == 0) first[k] = s[k];
            changed += s[k] != first[k];
        }
    }
    probe_stats(&hits, &misses);
    std::printf("x=%016" PRIx64 " y=%016" PRIx64 " outer_x=%016" PRIx64 " outer_y=%016" PRIx64
                " changed=%" PRIu64 " calls=%d misses=%" PRIu64 " hits=%" PRIu64 "\n",
                first[0], first[1], first[2], first[3], changed, 4 * kRounds, misses - misses_before, hits - hits_before);
    return 0;
}
