#include "trace/event.hpp"


#include <algorithm>
#include <array>
#include <cmath>

namespace htrace {
namespace {

constexpr std::array<std::string_view, kRoleCount> kRoleNames{
    "peer", "tag", "bytes", "source", "recv_tag", "recv_bytes", "root", "comm", "requests", "completed",
    "matched_peer", "matched_tag", "new_comm", "color", "key", "completed_set", "cancelled_set",
    "synchronous", "cancelled_peer", "cancelled_tag", "cancelled_comm",
    "remote_leader", "window", "target_bytes", "assertion", "lock_type",
    "file", "file_name", "amode", "offset", "whence", "file_size", "view_disp", "view_lb", "view_block", "view_blocks",
    "view_stride", "view_extent", "buffered", "topology", "thread", "group",
};

}  // namespace

std::string_view role_name(Role role) { return kRoleNames[static_cast<size_t>(role)]; }

bool role_is_peer(Role role)
{
    return role == Role::peer || role == Role::source || role == Role::root || role == Role::matched_peer;
}

bool role_is_relative(Role role)
{
    return role == Role::peer || role == Role::source || role == Role::matched_peer || role == Role::cancelled_peer;
}

bool role_is_categorical(Role role)
{
    return role == Role::comm || role == Role::new_comm || role == Role::color || role == Role::key ||
           role == Role::root || role == Role::synchronous || role == Role::buffered || role == Role::topology ||
           role == Role::thread || role == Role::group ||
           role == Role::cancelled_comm ||
           role == Role::remote_leader || role == Role::window || role == Role::assertion || role == Role::lock_type ||
           role == Role::file || role == Role::file_name || role == Role::amode || role == Role::whence ||
           role == Role::view_lb || role == Role::view_block || role == Role::view_blocks ||
           role == Role::view_stride || role == Role::view_extent;
}


void TimeStats::merge(const TimeStats& other)
{
    if (other.count == 0) return;
    if (count == 0) {
        *this = other;
        return;
    }
    const double n = double(count) + double(other.count);
    const double delta = other.mean - mean;
    mean += delta * double(other.count) / n;
    m2 += other.m2 + delta * delta * double(count) * double(other.count) / n;
    min = std::min(min, other.min);
    max = std::max(max, other.max);
    count += other.count;
}

TimeStats TimeStats::share(uint64_t part, uint64_t whole) const
{
    if (whole == 0 || part >= whole) return *this;
    TimeStats out = *this;
    const double fraction = double(part) / double(whole);
    out.count = count == 0 ? 0 : std::max<uint64_t>(uint64_t(std::llround(double(count) * fraction)), 1);
    out.m2 = m2 * fraction;
    return out;
}

const TimeStats& Event::compute_of(Rank rank) const
{
    for (const auto& group : compute_by_rank) {
        if (group.ranks.contains(rank)) return group.compute;
    }
    return compute;
}

const Value* Event::find(Role role) const
{
    for (const auto& param : params) {
        if (param.role == role) return &param.value;
    }
    return nullptr;
}

}  // namespace htrace
