#pragma once
// Small messages the tracer's ranks send each other at MPI_Finalize (the file-name census, the job's
// summary): fixed-width little-endian integers and length-prefixed text. The reader refuses a short
// message instead of reading past its end.

#include <bit>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace htrace {

inline void put_u8(std::vector<uint8_t>& out, uint8_t v) { out.push_back(v); }

inline void put_u32(std::vector<uint8_t>& out, uint32_t v)
{
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline void put_u64(std::vector<uint8_t>& out, uint64_t v)
{
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

inline void put_text(std::vector<uint8_t>& out, std::string_view text)
{
    put_u32(out, static_cast<uint32_t>(text.size()));
    out.insert(out.end(), text.begin(), text.end());
}

class ByteReader {
public:
    explicit ByteReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
    bool done() const { return at_ == bytes_.size(); }
    std::optional<uint8_t> u8()
    {
        if (at_ == bytes_.size()) return std::nullopt;
        return bytes_[at_++];
    }
    std::optional<uint32_t> u32() { return fixed<uint32_t>(); }
    std::optional<uint64_t> u64() { return fixed<uint64_t>(); }
    std::optional<std::vector<uint8_t>> bytes(uint64_t count)
    {
        if (bytes_.size() - at_ < count) return std::nullopt;
        std::vector<uint8_t> out(bytes_.begin() + long(at_), bytes_.begin() + long(at_ + count));
        at_ += count;
        return out;
    }
    std::vector<uint8_t> rest() { return *bytes(bytes_.size() - at_); }
    std::optional<std::string> text()
    {
        const auto length = u32();
        if (!length || bytes_.size() - at_ < *length) return std::nullopt;
        std::string out(reinterpret_cast<const char*>(bytes_.data()) + at_, *length);
        at_ += *length;
        return out;
    }

private:
    template <typename T>
    std::optional<T> fixed()
    {
        if (bytes_.size() - at_ < sizeof(T)) return std::nullopt;
        T v = 0;
        for (size_t i = 0; i < sizeof(T); ++i) v |= T(bytes_[at_ + i]) << (8 * i);
        at_ += sizeof(T);
        return v;
    }

    const std::vector<uint8_t>& bytes_;
    size_t at_ = 0;
};

}  // namespace htrace
