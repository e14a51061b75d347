#pragma once
// The 64-bit mixing step behind call-site signatures and the keys of loop folding.

#include <cstdint>

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

}  // namespace htrace
