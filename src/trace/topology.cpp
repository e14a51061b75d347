#include "trace/topology.hpp"

#include "trace/event.hpp"

#include <algorithm>
#include <charconv>

namespace htrace {
namespace {

// Bounds of what a job has: more says the text is damaged.
constexpr size_t kMostDimensions = 64;
constexpr size_t kMostNeighbours = size_t{1} << 20;
constexpr int64_t kMostRanks = int64_t{1} << 24;

std::string joined(const std::vector<int64_t>& values)
{
    std::string text;
    for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + std::to_string(values[i]);
    return text;
}

// "name=1,2,3" (or "name=" for none) into `values`; false if it is not that.
bool parse_list(std::string_view word, std::string_view name, size_t most, std::vector<int64_t>& values)
{
    if (word.size() < name.size() + 1 || word.substr(0, name.size()) != name || word[name.size()] != '=') return false;
    std::string_view rest = word.substr(name.size() + 1);
    while (!rest.empty()) {
        const size_t comma = rest.find(',');
        const std::string_view item = rest.substr(0, comma);
        int64_t v = 0;
        const auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), v);
        if (error != std::errc() || end != item.data() + item.size() || values.size() >= most) return false;
        values.push_back(v);
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
        if (rest.empty()) return false;
    }
    return true;
}

std::vector<std::string_view> words(std::string_view text)
{
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const size_t space = text.find(' ');
        out.push_back(text.substr(0, space));
        if (space == std::string_view::npos) break;
        text.remove_prefix(space + 1);
    }
    return out;
}

}  // namespace

std::string topology_text(const Topology& t)
{
    if (t.cartesian) return "cart dims=" + joined(t.dims) + " periods=" + joined(t.periods);
    return "graph sources=" + joined(t.sources) + " destinations=" + joined(t.destinations);
}

std::optional<Topology> parse_topology(std::string_view text)
{
    const auto parts = words(text);
    if (parts.size() != 3) return std::nullopt;
    Topology t;
    if (parts[0] == "cart") {
        t.cartesian = true;
        if (!parse_list(parts[1], "dims", kMostDimensions, t.dims) ||
            !parse_list(parts[2], "periods", kMostDimensions, t.periods) || t.dims.size() != t.periods.size()) {
            return std::nullopt;
        }
        int64_t cells = 1;
        for (size_t i = 0; i < t.dims.size(); ++i) {
            if (t.dims[i] < 1 || t.dims[i] > kMostRanks || (t.periods[i] != 0 && t.periods[i] != 1)) return std::nullopt;
            cells *= t.dims[i];
            if (cells > kMostRanks) return std::nullopt;
        }
        return t;
    }
    if (parts[0] != "graph" || !parse_list(parts[1], "sources", kMostNeighbours, t.sources) ||
        !parse_list(parts[2], "destinations", kMostNeighbours, t.destinations)) {
        return std::nullopt;
    }
    const auto relative = [](int64_t v) { return v >= 0 && v < kMostRanks; };
    if (!std::all_of(t.sources.begin(), t.sources.end(), relative) ||
        !std::all_of(t.destinations.begin(), t.destinations.end(), relative)) {
        return std::nullopt;
    }
    return t;
}

int64_t topology_key(std::string_view text)
{
    // FNV-1a folded to 31 bits, as file names are keyed.
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return static_cast<int64_t>((h ^ (h >> 31) ^ (h >> 62)) & 0x7fffffff);
}

Neighbours neighbours_of(const Topology& t, int64_t rank, int64_t size)
{
    Neighbours n;
    if (!t.cartesian) {
        if (size <= 0) return n;
        for (int64_t s : t.sources) n.sources.push_back((rank + s) % size);
        for (int64_t d : t.destinations) n.destinations.push_back((rank + d) % size);
        return n;
    }
    // Row-major, as MPI numbers a grid: the last dimension varies fastest.
    std::vector<int64_t> coords(t.dims.size());
    int64_t rest = rank;
    for (size_t i = t.dims.size(); i-- > 0;) {
        coords[i] = rest % t.dims[i];
        rest /= t.dims[i];
    }
    const auto rank_at = [&](size_t dim, int64_t shift) -> int64_t {
        int64_t c = coords[dim] + shift;
        if (c < 0 || c >= t.dims[dim]) {
            if (t.periods[dim] == 0) return kProcNull;
            c = (c + t.dims[dim]) % t.dims[dim];
        }
        int64_t r = 0;
        for (size_t i = 0; i < t.dims.size(); ++i) r = r * t.dims[i] + (i == dim ? c : coords[i]);
        return r;
    };
    for (size_t dim = 0; dim < t.dims.size(); ++dim) {
        for (const int64_t shift : {-1, 1}) {
            n.sources.push_back(rank_at(dim, shift));
            n.destinations.push_back(rank_at(dim, shift));
        }
    }
    return n;
}

std::optional<size_t> sending_slot(bool cartesian, const Neighbours& receiver, size_t slot, int64_t receiver_rank,
                                   const Neighbours& sender)
{
    if (slot >= receiver.sources.size()) return std::nullopt;
    if (cartesian) {
        // What a rank sends towards the negative side arrives from the positive side, and so on.
        const size_t other = slot ^ 1u;
        if (other >= sender.destinations.size() || sender.destinations[other] != receiver_rank) return std::nullopt;
        return other;
    }
    const int64_t source = receiver.sources[slot];
    const auto nth = std::count(receiver.sources.begin(), receiver.sources.begin() + static_cast<std::ptrdiff_t>(slot),
                                source);
    int64_t seen = 0;
    for (size_t j = 0; j < sender.destinations.size(); ++j) {
        if (sender.destinations[j] != receiver_rank) continue;
        if (seen++ == nth) return j;
    }
    return std::nullopt;
}

}  // namespace htrace
