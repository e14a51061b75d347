#include "trace/value.hpp"

namespace htrace {

std::optional<int64_t> Value::value_for(Rank rank) const
{
    if (is_exact()) return exact();
    if (is_per_rank()) {
        for (const auto& entry : per_rank()) {
            if (entry.ranks.contains(rank)) return entry.value;
        }
    }
    return std::nullopt;
}

}  // namespace htrace
