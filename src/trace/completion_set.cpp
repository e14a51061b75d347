#include "trace/completion_set.hpp"

namespace htrace {
namespace {

constexpr uint32_t kMaskPositions = 62;
constexpr int64_t kMaxFirst = (int64_t{1} << 23) - 1;
constexpr int64_t kMaxStride = 255;
constexpr int64_t kMaxCount = (int64_t{1} << 32) - 1;

}  // namespace

int64_t encode_completed_set(std::span<const uint32_t> positions)
{
    if (positions.empty()) return 0;
    if (positions.back() < kMaskPositions) {
        int64_t mask = 0;
        for (uint32_t p : positions) mask |= int64_t{1} << p;
        return mask;
    }
    const int64_t first = positions.front();
    const int64_t count = static_cast<int64_t>(positions.size());
    const int64_t stride = count > 1 ? int64_t{positions[1]} - first : 1;
    for (size_t i = 1; i < positions.size(); ++i) {
        if (int64_t{positions[i]} - int64_t{positions[i - 1]} != stride) return kUnknownCompletedSet;
    }
    if (first > kMaxFirst || stride < 1 || stride > kMaxStride || count > kMaxCount) return kUnknownCompletedSet;
    return -((first << 40) | (stride << 32) | count);
}

std::optional<std::vector<uint32_t>> decode_completed_set(int64_t value, uint32_t limit)
{
    if (value == kUnknownCompletedSet) return std::nullopt;
    std::vector<uint32_t> positions;
    if (value >= 0) {
        for (uint32_t p = 0; p < kMaskPositions && positions.size() < limit; ++p) {
            if ((value >> p) & 1) positions.push_back(p);
        }
        return positions;
    }
    const int64_t packed = -value;
    const int64_t first = packed >> 40;
    const int64_t stride = std::max<int64_t>(1, (packed >> 32) & kMaxStride);
    const int64_t count = std::min<int64_t>(packed & kMaxCount, limit);
    for (int64_t i = 0; i < count; ++i) positions.push_back(static_cast<uint32_t>(first + i * stride));
    return positions;
}

}  // namespace htrace
