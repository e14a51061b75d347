#include "trace/completion_set.hpp"

#include "trace/hot_path.hpp"

#include <bit>

namespace htrace {
namespace {

constexpr uint32_t kChunkPositions = 56;
constexpr uint32_t kChunks = 127;  // the high byte holds the chunk plus 1 (0 is a single position)
constexpr int64_t kChunkMask = (int64_t{1} << kChunkPositions) - 1;
constexpr int64_t kFirstChunkValue = int64_t{1} << kChunkPositions;
constexpr int64_t kMaxFirst = (int64_t{1} << 23) - 1;
constexpr int64_t kMaxStride = 255;
constexpr int64_t kMaxCount = (int64_t{1} << 32) - 1;

// The one value of an evenly spaced run of positions beyond the first chunk, if it is one.
std::optional<int64_t> as_run(std::span<const uint32_t> positions)
{
    if (positions.size() < 2 || positions.back() < kChunkPositions) return std::nullopt;
    const int64_t first = positions.front();
    const int64_t stride = int64_t{positions[1]} - first;
    for (size_t i = 1; i < positions.size(); ++i) {
        if (int64_t{positions[i]} - int64_t{positions[i - 1]} != stride) return std::nullopt;
    }
    const auto count = static_cast<int64_t>(positions.size());
    if (first > kMaxFirst || stride < 1 || stride > kMaxStride || count > kMaxCount) return std::nullopt;
    return -((first << 40) | (stride << 32) | count);
}

}  // namespace

std::vector<int64_t> encode_completed_set(std::span<const uint32_t> positions, size_t pending)
{
    std::vector<int64_t> values;
    encode_completed_set(positions, values, pending);
    return values;
}

HTRACE_HOT void encode_completed_set(std::span<const uint32_t> positions, std::vector<int64_t>& values, size_t pending)
{
    values.clear();
    if (positions.empty()) {
        values.push_back(0);
        return;
    }
    // The oldest `count` of `pending`: positions pending - count .. pending - 1, ascending.
    const auto count = static_cast<int64_t>(positions.size());
    if (pending > 0 && positions.back() + 1 == pending && positions.front() + positions.size() == pending &&
        count <= kMaxCount) {
        values.push_back(-count);
        return;
    }
    if (positions.size() == 1) {
        values.push_back(int64_t{positions.front()} + 1);
        return;
    }
    if (const auto run = as_run(positions)) {
        values.push_back(*run);
        return;
    }
    if (positions.back() >= kChunkPositions * kChunks) {
        values.push_back(kUnknownCompletedSet);
        return;
    }
    for (uint32_t p : positions) {
        const int64_t chunk_value = (int64_t{p / kChunkPositions} + 1) << kChunkPositions;
        const int64_t bit = int64_t{1} << (p % kChunkPositions);
        if (values.empty() || (values.back() & ~kChunkMask) != chunk_value) values.push_back(chunk_value);
        values.back() |= bit;
    }
}

std::optional<std::vector<uint32_t>> decode_completed_set(std::span<const int64_t> values, uint32_t pending)
{
    std::vector<uint32_t> positions;
    if (!decode_completed_set(values, pending, positions)) return std::nullopt;
    return positions;
}

bool decode_completed_set(std::span<const int64_t> values, uint32_t pending, std::vector<uint32_t>& positions)
{
    positions.clear();
    for (int64_t value : values) {
        if (value == kUnknownCompletedSet) return false;
        if (value == 0) continue;
        if (value < kFirstChunkValue && value > 0) {
            positions.push_back(static_cast<uint32_t>(std::min<int64_t>(value - 1, UINT32_MAX)));
            continue;
        }
        if (value > 0) {
            const auto base = static_cast<uint32_t>((value >> kChunkPositions) - 1) * kChunkPositions;
            for (uint32_t i = 0; i < kChunkPositions; ++i) {
                if ((value >> i) & 1) positions.push_back(base + i);
            }
            continue;
        }
        const int64_t packed = -value;
        if ((packed >> 32) == 0) {  // the oldest
            const int64_t oldest = std::min<int64_t>(packed, pending);
            for (int64_t i = pending - oldest; i < pending; ++i) positions.push_back(static_cast<uint32_t>(i));
            continue;
        }
        const int64_t first = packed >> 40;
        const int64_t stride = std::max<int64_t>(1, (packed >> 32) & kMaxStride);
        const int64_t count = std::min<int64_t>(packed & kMaxCount, pending);
        for (int64_t i = 0; i < count; ++i) positions.push_back(static_cast<uint32_t>(first + i * stride));
    }
    std::sort(positions.begin(), positions.end());
    positions.erase(std::unique(positions.begin(), positions.end()), positions.end());
    if (positions.size() > pending) positions.resize(pending);
    return true;
}

int64_t completed_set_value_before_12(int64_t value)
{
    if (value <= 0) return value;  // nothing, the oldest, a run, unknown: as they were
    const int64_t chunk = (value >> kChunkPositions) % 128;
    const int64_t bits = value & kChunkMask;
    if (bits == 0) return 0;
    if ((bits & (bits - 1)) == 0) return chunk * kChunkPositions + std::countr_zero(static_cast<uint64_t>(bits)) + 1;
    if (chunk >= kChunks) return kUnknownCompletedSet;
    return ((chunk + 1) << kChunkPositions) | bits;
}

int64_t completed_set_as_oldest(int64_t value)
{
    if (value == 0 || value == kUnknownCompletedSet) return value;
    if (value > 0 && value < kFirstChunkValue) return -1;
    if (value > 0) return -std::popcount(static_cast<uint64_t>(value & kChunkMask));
    const int64_t packed = -value;
    return -(packed & kMaxCount);  // the oldest k, or a run's count
}

bool completed_set_names(std::span<const int64_t> values, uint32_t position)
{
    const auto positions = decode_completed_set(values, 1u << 20);
    return positions && std::binary_search(positions->begin(), positions->end(), position);
}

}  // namespace htrace
