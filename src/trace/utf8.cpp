#include "trace/utf8.hpp"

#include <cstdint>

namespace htrace {
namespace {

// The length of the valid character that starts `text`, 0 if none does.
size_t character_length(std::string_view text)
{
    const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
    const uint8_t first = byte(0);
    if (first < 0x80) return 1;
    size_t length = 0;
    uint32_t code = 0;
    if (first >= 0xc2 && first <= 0xdf) {
        length = 2;
        code = first & 0x1f;
    } else if (first >= 0xe0 && first <= 0xef) {
        length = 3;
        code = first & 0x0f;
    } else if (first >= 0xf0 && first <= 0xf4) {
        length = 4;
        code = first & 0x07;
    } else {
        return 0;
    }
    if (text.size() < length) return 0;
    for (size_t i = 1; i < length; ++i) {
        if ((byte(i) & 0xc0) != 0x80) return 0;
        code = code << 6 | (byte(i) & 0x3f);
    }
    const bool overlong = (length == 3 && code < 0x800) || (length == 4 && code < 0x10000);
    const bool surrogate = code >= 0xd800 && code <= 0xdfff;
    if (overlong || surrogate || code > 0x10ffff) return 0;
    return length;
}

}  // namespace

bool is_valid_utf8(std::string_view text)
{
    while (!text.empty()) {
        const size_t length = character_length(text);
        if (length == 0) return false;
        text.remove_prefix(length);
    }
    return true;
}

std::string as_valid_utf8(std::string_view text, size_t most_bytes)
{
    constexpr std::string_view kReplacement = "\xef\xbf\xbd";  // U+FFFD
    std::string out;
    while (!text.empty()) {
        const size_t length = character_length(text);
        const std::string_view character = length == 0 ? kReplacement : text.substr(0, length);
        if (out.size() + character.size() > most_bytes) break;
        out += character;
        text.remove_prefix(length == 0 ? 1 : length);
    }
    return out;
}

}  // namespace htrace
