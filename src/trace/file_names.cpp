#include "trace/file_names.hpp"

#include <cctype>
#include <string>

namespace htrace {

std::string file_name_pattern(std::string_view name, Rank rank)
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
        if (run.substr(first_nonzero) == wanted) {
            match_begin = i;
            match_end = end;
        }
        i = end;
    }
    std::string out;
    const auto escaped = [&](std::string_view part) {
        for (char c : part) {
            if (c == '{' || c == '}') out += c;
            out += c;
        }
    };
    if (match_begin == std::string_view::npos) {
        escaped(name);
        return out;
    }
    escaped(name.substr(0, match_begin));
    const size_t width = match_end - match_begin;
    out += width > wanted.size() ? "{rank:0" + std::to_string(width) + "}" : "{rank}";
    escaped(name.substr(match_end));
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

}  // namespace htrace
