#include "replay/trace_holder.hpp"

#include <map>
#include <mutex>

namespace htrace::replay {

const void* hold_once(const std::string& key, const std::function<const void*()>& make)
{
    static std::mutex mutex;
    // Never destroyed, nor what it points to: the objects were made by code of some rank's copy of
    // h-replay-smpi, which the holder cannot call at exit, and the process's end frees them anyway.
    static auto* held = new std::map<std::string, const void*>;
    const std::lock_guard lock(mutex);
    if (const auto found = held->find(key); found != held->end()) return found->second;
    const void* made = make();
    held->emplace(key, made);
    return made;
}

}  // namespace htrace::replay
