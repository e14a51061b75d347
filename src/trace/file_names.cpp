#include "trace/file_names.hpp"

#include "trace/byte_message.hpp"
#include "trace/limits.hpp"
#include "trace/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstddef>
#include <string>
#include <utility>

namespace htrace {

namespace {

std::string pattern_of(std::string_view name, Rank rank)
{
    const std::string wanted = std::to_string(rank);
    // The last run of digits that spells the rank, with or without leading zeros.
    size_t match_begin = std::string_view::npos;
    size_t match_end = 0;
    for (size_t i = 0; i < name.size();) {
        if (!std::isdigit(static_cast<unsigned char>(name[i]))) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) ++end;
        std::string_view run = name.substr(i, end - i);
        const size_t first_nonzero = std::min(run.find_first_not_of('0'), run.size() - 1);
        // Padded wider than the reader takes, it stays a literal.
        if (run.substr(first_nonzero) == wanted && run.size() <= size_t{limits::kMostRankWidth}) {
            match_begin = i;
            match_end = end;
        }
        i = end;
    }
    if (match_begin == std::string_view::npos) return file_name_literal(name);
    const size_t width = match_end - match_begin;
    return file_name_literal(name.substr(0, match_begin)) +
           (width > wanted.size() ? "{rank:0" + std::to_string(width) + "}" : "{rank}") +
           file_name_literal(name.substr(match_end));
}

}  // namespace

// What the reader takes (trace/limits.hpp): valid UTF-8, U+FFFD standing for each byte of the name
// that is no character (replay then uses that name), and at most kMostNameBytes with braces doubled
// and the rank's field, which a name too long for that (longer than file systems take) gets by
// keeping its beginning.
std::string file_name_pattern(std::string_view raw, Rank rank)
{
    const std::string name = as_valid_utf8(raw, limits::kMostNameBytes);
    std::string pattern = pattern_of(name, rank);
    // Half the limit, less the longest rank field, fits whatever the name holds.
    if (pattern.size() > limits::kMostNameBytes) pattern = pattern_of(as_valid_utf8(name, limits::kMostNameBytes / 2 - 16), rank);
    return pattern;
}

std::string file_name_literal(std::string_view name)
{
    std::string out;
    out.reserve(name.size());
    for (char c : name) {
        if (c == '{' || c == '}') out += c;
        out += c;
    }
    return out;
}

std::string file_name_for(std::string_view pattern, Rank rank)
{
    std::string out;
    for (size_t i = 0; i < pattern.size(); ++i) {
        const char c = pattern[i];
        if ((c == '{' || c == '}') && i + 1 < pattern.size() && pattern[i + 1] == c) {
            out += c;
            ++i;
            continue;
        }
        if (c == '{' && pattern.substr(i).starts_with("{rank")) {
            const size_t close = pattern.find('}', i);
            if (close == std::string_view::npos) break;
            std::string digits = std::to_string(rank);
            const std::string_view spec = pattern.substr(i + 5, close - i - 5);  // "" or ":0N"
            if (spec.starts_with(":0")) {
                const size_t width = std::stoul(std::string(spec.substr(2)));
                if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
            }
            out += digits;
            i = close;
            continue;
        }
        out += c;
    }
    return out;
}

int64_t file_name_key(std::string_view pattern)
{
    // FNV-1a, folded to 31 bits: a few bytes in the file, and collisions unlikely among a job's files.
    uint64_t h = 0xcbf29ce484222325ull;
    for (char c : pattern) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ull;
    }
    return static_cast<int64_t>((h ^ (h >> 31) ^ (h >> 62)) & 0x7fffffffull);
}

bool file_name_has_rank(std::string_view stored)
{
    for (size_t i = 0; i < stored.size(); ++i) {
        const char c = stored[i];
        if ((c == '{' || c == '}') && i + 1 < stored.size() && stored[i + 1] == c) {
            ++i;  // a brace of the name
            continue;
        }
        if (c == '{' && stored.substr(i).starts_with("{rank")) return true;
    }
    return false;
}

std::string FileNameDecision::decide(std::string_view stored, Rank rank) const
{
    if (!file_name_has_rank(stored) || confirmed_.contains(std::string(stored))) return std::string(stored);
    // Only this rank derived this pattern: its name, unless a pattern that stands gives it that name.
    const std::string name = file_name_for(stored, rank);
    for (const auto& pattern : confirmed_) {
        if (file_name_for(pattern, rank) == name) return pattern;
    }
    return file_name_literal(name);
}

// The census and decision travel between ranks as bytes (trace/byte_message.hpp): a count of
// entries, then the entries; counts, lengths and ranks as 4 bytes.
std::vector<uint8_t> FileNameDecision::encode() const
{
    std::vector<uint8_t> out;
    put_u32(out, static_cast<uint32_t>(confirmed_.size()));
    for (const auto& pattern : confirmed_) put_text(out, pattern);
    return out;
}

std::optional<FileNameDecision> FileNameDecision::decode(const std::vector<uint8_t>& bytes)
{
    std::set<std::string> confirmed;
    ByteReader in(bytes);
    const auto count = in.u32();
    if (!count) return std::nullopt;
    for (uint32_t i = 0; i < *count; ++i) {
        auto pattern = in.text();
        if (!pattern) return std::nullopt;
        confirmed.insert(std::move(*pattern));
    }
    if (!in.done()) return std::nullopt;
    return FileNameDecision(std::move(confirmed));
}

void FileNameCensus::add(const std::string& stored, Rank rank)
{
    const auto [at, added] = names_.try_emplace(stored, Storers{rank, false});
    if (added) return;
    Storers& s = at->second;
    s.several = s.several || s.lowest != rank;
    s.lowest = std::min(s.lowest, rank);
}

void FileNameCensus::merge(const FileNameCensus& other)
{
    for (const auto& [stored, theirs] : other.names_) {
        const auto [at, added] = names_.try_emplace(stored, theirs);
        if (added) continue;
        Storers& s = at->second;
        s.several = s.several || theirs.several || s.lowest != theirs.lowest;
        s.lowest = std::min(s.lowest, theirs.lowest);
    }
}

FileNameDecision FileNameCensus::decide() const
{
    std::set<std::string> confirmed;
    for (const auto& [stored, storers] : names_) {
        if (storers.several && file_name_has_rank(stored)) confirmed.insert(stored);
    }
    return FileNameDecision(std::move(confirmed));
}

std::map<int64_t, std::string> FileNameCensus::decided_names(const FileNameDecision& decision) const
{
    std::map<int64_t, std::string> out;
    for (const auto& [stored, storers] : names_) {
        // A pattern that does not stand was one rank's, the lowest: what it stores instead.
        std::string decided = decision.decide(stored, storers.lowest);
        const int64_t key = file_name_key(decided);
        out.emplace(key, std::move(decided));
    }
    return out;
}

std::vector<uint8_t> FileNameCensus::encode() const
{
    std::vector<uint8_t> out;
    put_u32(out, static_cast<uint32_t>(names_.size()));
    for (const auto& [stored, storers] : names_) {
        put_text(out, stored);
        put_u32(out, static_cast<uint32_t>(storers.lowest));
        out.push_back(storers.several ? 1 : 0);
    }
    return out;
}

std::optional<FileNameCensus> FileNameCensus::decode(const std::vector<uint8_t>& bytes)
{
    FileNameCensus census;
    ByteReader in(bytes);
    const auto count = in.u32();
    if (!count) return std::nullopt;
    for (uint32_t i = 0; i < *count; ++i) {
        auto stored = in.text();
        const auto lowest = in.u32();
        const auto several = in.u8();
        if (!stored || !lowest || !several || *several > 1 || *lowest > uint32_t(INT32_MAX)) return std::nullopt;
        census.names_[std::move(*stored)] = Storers{static_cast<Rank>(*lowest), *several == 1};
    }
    if (!in.done()) return std::nullopt;
    return census;
}

std::map<int64_t, int64_t> renamed_file_name_keys(const std::map<int64_t, std::string>& mine, Rank rank,
                                                  const FileNameDecision& decision)
{
    std::map<int64_t, int64_t> renamed;
    for (const auto& [key, stored] : mine) {
        const int64_t decided = file_name_key(decision.decide(stored, rank));
        if (decided != key) renamed.emplace(key, decided);
    }
    return renamed;
}

void rename_file_names(Sequence& seq, const std::map<int64_t, int64_t>& renamed)
{
    if (renamed.empty()) return;
    const auto new_key = [&](int64_t key) {
        const auto found = renamed.find(key);
        return found == renamed.end() ? key : found->second;
    };
    for (auto& node : seq) {
        if (node.is_loop()) {
            rename_file_names(node.loop().body, renamed);
            continue;
        }
        for (auto& p : node.event().params) {
            if (p.role != Role::file_name) continue;
            if (p.value.is_exact()) {
                p.value = Value(new_key(p.value.exact()));
            } else if (p.value.is_per_rank()) {
                std::vector<PerRankValue> entries = p.value.per_rank();
                for (auto& entry : entries) entry.value = new_key(entry.value);
                p.value = Value(entries);
            }
            // A name is categorical: never a histogram.
        }
    }
}

}  // namespace htrace
