#include "capture/own_code.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <utility>

namespace {

// The executable segment holding `address`: [begin, end).
std::pair<uintptr_t, uintptr_t> code_segment_of(const void* address)
{
    struct Search {
        uintptr_t wanted, begin = 0, end = 0;
    } search{reinterpret_cast<uintptr_t>(address)};
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* data) {
            auto& s = *static_cast<Search*>(data);
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& segment = info->dlpi_phdr[i];
                if (segment.p_type != PT_LOAD || (segment.p_flags & PF_X) == 0) continue;
                const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
                if (s.wanted < begin || s.wanted >= begin + segment.p_memsz) continue;
                s.begin = begin;
                s.end = begin + segment.p_memsz;
                return 1;
            }
            return 0;
        },
        &search);
    return {search.begin, search.end};
}

// Pages of [begin, end) the process's page tables do not map (/proc/self/pagemap, bit 63).
long unmapped_pages(uintptr_t begin, uintptr_t end)
{
    const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const int fd = open("/proc/self/pagemap", O_RDONLY);
    REQUIRE(fd >= 0);
    long unmapped = 0;
    for (uintptr_t at = begin & ~(page - 1); at < end; at += page) {
        uint64_t entry = 0;
        const bool read = pread(fd, &entry, sizeof entry, static_cast<off_t>(at / page * sizeof entry)) == sizeof entry;
        if (!read || (entry >> 63) == 0) ++unmapped;
    }
    close(fd);
    return unmapped;
}

}  // namespace

TEST_CASE("every page of the tracer's code is mapped before the first traced call")
{
    const auto [begin, end] = code_segment_of(reinterpret_cast<const void*>(&htrace::capture::map_own_code));
    REQUIRE(end > begin);
    htrace::capture::map_own_code();
    CHECK(unmapped_pages(begin, end) == 0);
}
