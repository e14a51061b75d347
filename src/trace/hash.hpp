#pragma once
// The 64-bit mixing step behind call-site signatures and the keys of loop folding, and the hash of
// the names that go into signatures (modules, Python files and functions).

#include <cstdint>
#include <string_view>

namespace htrace {

// A bijective finaliser (MurmurHash3's): every input bit affects every output bit.
inline uint64_t mix64(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

inline constexpr uint64_t kTextHashStart = 1469598103934665603ull;

// FNV-1a over `text`, continuing from `h` (so that several texts hash as one).
inline uint64_t hash_text(std::string_view text, uint64_t h = kTextHashStart)
{
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 1099511628211ull;
    }
    return h;
}

}  // namespace htrace
