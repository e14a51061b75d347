#pragma once
// File names in a trace: a name with the rank in it is stored as one pattern for all ranks
// ("ckpt_0017.dat" on rank 17 is "ckpt_{rank:04}.dat"), named in events by a key derived from the
// pattern alone, so that ranks agree on it without talking.

#include "trace/rank_list.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace htrace {

// The pattern of `name` as `rank` used it: the last run of digits whose value is the rank becomes
// "{rank}", or "{rank:0N}" where it was padded with zeros to N digits. Braces in the name are
// doubled.
std::string file_name_pattern(std::string_view name, Rank rank);

// The name `pattern` stands for on `rank`.
std::string file_name_for(std::string_view pattern, Rank rank);

// The key events name a pattern by: the same on every rank, small enough to cost few bytes.
int64_t file_name_key(std::string_view pattern);

}  // namespace htrace
