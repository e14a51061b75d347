#pragma once
// Compact storage for what a trace holds many of: rank lists and per-rank values, as the
// variable-length integers the trace file stores them in (LEB128, zigzag for signed values), in at
// most one allocation each. Every replaying rank holds the whole trace, and an irregular code's
// lossless trace is mostly such lists: held as vectors of runs of vectors, they took 20 times the
// file's bytes.

#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace htrace {

inline void pack_unsigned(std::vector<uint8_t>& out, uint64_t v)
{
    while (v >= 0x80) {
        out.push_back(static_cast<uint8_t>(v | 0x80));
        v >>= 7;
    }
    out.push_back(static_cast<uint8_t>(v));
}

inline void pack_signed(std::vector<uint8_t>& out, int64_t v)
{
    pack_unsigned(out, (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
}

// Reads what pack_unsigned and pack_signed wrote. The bytes were packed by this process, never read
// from a file as they are, so they are well formed.
class Unpacker {
public:
    explicit Unpacker(std::span<const uint8_t> bytes) : at_(bytes.data()), end_(bytes.data() + bytes.size()) {}

    bool at_end() const { return at_ == end_; }
    // Where reading has got to: the bytes between two positions are what was read in between.
    const uint8_t* position() const { return at_; }
    uint64_t unsigned_int()
    {
        uint64_t v = 0;
        for (int shift = 0;; shift += 7) {
            const uint8_t b = *at_++;
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80)) return v;
        }
    }
    int64_t signed_int()
    {
        const uint64_t v = unsigned_int();
        return static_cast<int64_t>((v >> 1) ^ (~(v & 1) + 1));
    }

private:
    const uint8_t* at_;
    const uint8_t* end_;
};

// A byte string that never changes once made: 8 bytes, which hold up to 7 bytes themselves (a rank
// list of one or two runs), else the address of one allocation holding the size and the bytes.
// Those 8 bytes are a plain array, so that a PackedBytes needs no alignment and a Value, which may
// hold one, packs tightly beside a Role in an event's parameters.
class PackedBytes {
public:
    PackedBytes() = default;
    explicit PackedBytes(std::span<const uint8_t> bytes)
    {
        if (bytes.empty()) return;
        if (bytes.size() <= kMostInline) {
            word_[0] = static_cast<uint8_t>(bytes.size() << 1 | 1);
            std::memcpy(word_ + 1, bytes.data(), bytes.size());
            return;
        }
        const auto size = static_cast<uint32_t>(bytes.size());
        auto* data = new uint8_t[sizeof size + bytes.size()];
        std::memcpy(data, &size, sizeof size);
        std::memcpy(data + sizeof size, bytes.data(), bytes.size());
        std::memcpy(word_, &data, sizeof data);
    }
    PackedBytes(const PackedBytes& other) : PackedBytes(other.bytes()) {}
    PackedBytes(PackedBytes&& other) noexcept
    {
        std::memcpy(word_, other.word_, sizeof word_);
        std::memset(other.word_, 0, sizeof word_);
    }
    PackedBytes& operator=(const PackedBytes& other)
    {
        if (this != &other) *this = PackedBytes(other);
        return *this;
    }
    PackedBytes& operator=(PackedBytes&& other) noexcept
    {
        uint8_t kept[sizeof word_];
        std::memcpy(kept, word_, sizeof word_);
        std::memcpy(word_, other.word_, sizeof word_);
        std::memcpy(other.word_, kept, sizeof word_);
        return *this;
    }
    ~PackedBytes() { delete[] allocation(); }

    bool empty() const { return bytes().empty(); }
    std::span<const uint8_t> bytes() const
    {
        if (word_[0] & 1) return {word_ + 1, static_cast<size_t>(word_[0] >> 1)};
        const uint8_t* data = allocation();
        if (data == nullptr) return {};
        uint32_t size = 0;
        std::memcpy(&size, data, sizeof size);
        return {data + sizeof size, size};
    }
    bool operator==(const PackedBytes& other) const
    {
        const auto a = bytes();
        const auto b = other.bytes();
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
    }

private:
    static constexpr size_t kMostInline = 7;
    // The first byte of the 8 is odd where they hold the bytes themselves (the size, shifted, and the
    // low bit). An allocation's address is even, and its lowest byte comes first on the
    // little-endian machines this runs on; all zero is empty.
    static_assert(std::endian::native == std::endian::little);
    uint8_t* allocation() const
    {
        if (word_[0] & 1) return nullptr;
        uint8_t* data = nullptr;
        std::memcpy(&data, word_, sizeof data);
        return data;
    }

    uint8_t word_[8] = {};
};

}  // namespace htrace
