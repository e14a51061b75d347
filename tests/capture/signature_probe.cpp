// Prints the signatures of two call sites (one of them reached twice) and the raw address of
// one of them, so a test can compare them across runs under ASLR.
#include <cinttypes>
#include <cstdint>
#include <cstdio>

extern "C" uint64_t probe_signature();

__attribute__((noinline)) uint64_t site_a() { return probe_signature(); }
__attribute__((noinline)) uint64_t site_b() { return probe_signature(); }
__attribute__((noinline)) uint64_t through_helper() { return site_a(); }

int main(int argc, char**)
{
    uint64_t a[2];
    // A loop the compiler cannot unroll, so both calls come from one call site.
    for (int i = 0; i < argc + 1; ++i) a[i % 2] = site_a();
    std::printf("a=%016" PRIx64 " a_again=%016" PRIx64 " b=%016" PRIx64 " a_via_helper=%016" PRIx64 " main=%p\n",
                a[0], a[1], site_b(), through_helper(), reinterpret_cast<void*>(&site_b));
    return 0;
}
