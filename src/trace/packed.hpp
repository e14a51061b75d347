#pragma once
// Compact storage for what a trace holds many of: rank lists and per-rank values, as the
// variable-length integers the trace file stores them in (LEB128, zigzag for signed values), each in
// one allocation. Every replaying rank holds the whole trace, and an irregular code's lossless trace
// is mostly such lists: held as vectors of runs of vectors, they took 20 times the file's bytes.

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

// A byte string that never changes once made, in one allocation (its size first), and nothing where
// it is empty: 8 bytes besides the bytes themselves.
class PackedBytes {
public:
    PackedBytes() = default;
    explicit PackedBytes(std::span<const uint8_t> bytes)
    {
        if (bytes.empty()) return;
        const auto size = static_cast<uint32_t>(bytes.size());
        data_ = new uint8_t[sizeof size + bytes.size()];
        std::memcpy(data_, &size, sizeof size);
        std::memcpy(data_ + sizeof size, bytes.data(), bytes.size());
    }
    PackedBytes(const PackedBytes& other) : PackedBytes(other.bytes()) {}
    PackedBytes(PackedBytes&& other) noexcept : data_(std::exchange(other.data_, nullptr)) {}
    PackedBytes& operator=(const PackedBytes& other)
    {
        if (this != &other) *this = PackedBytes(other);
        return *this;
    }
    PackedBytes& operator=(PackedBytes&& other) noexcept
    {
        std::swap(data_, other.data_);
        return *this;
    }
    ~PackedBytes() { delete[] data_; }

    bool empty() const { return data_ == nullptr; }
    std::span<const uint8_t> bytes() const
    {
        if (data_ == nullptr) return {};
        uint32_t size = 0;
        std::memcpy(&size, data_, sizeof size);
        return {data_ + sizeof size, size};
    }
    bool operator==(const PackedBytes& other) const
    {
        const auto a = bytes();
        const auto b = other.bytes();
        return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
    }

private:
    uint8_t* data_ = nullptr;
};

}  // namespace htrace
