#pragma once
// UTF-8 for the text a trace holds (names of files and operations, the command line): the reader
// refuses text that is not valid UTF-8, so every tool can print it and every JSON reader parse it,
// and the tracer stores what a program handed it in that form.

#include <cstddef>
#include <string>
#include <string_view>

namespace htrace {

// Whether `text` is valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
bool is_valid_utf8(std::string_view text);

// `text` as valid UTF-8 of at most `most_bytes` bytes: each byte that starts no valid character
// becomes U+FFFD, and the text is cut at the last whole character that fits.
std::string as_valid_utf8(std::string_view text, size_t most_bytes);

}  // namespace htrace
