#include "replay/sandbox.hpp"

#include <sys/stat.h>

#include <vector>

namespace htrace::replay {
namespace {

bool is_symlink(const std::string& path)
{
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

}  // namespace

std::string sandboxed_path(const std::string& sandbox, const std::string& name)
{
    std::vector<std::string> parts;
    for (size_t at = 0; at <= name.size();) {
        const size_t end = std::min(name.find('/', at), name.size());
        std::string part = name.substr(at, end - at);
        if (!part.empty() && part != "." && part != "..") parts.push_back(std::move(part));
        at = end + 1;
    }
    if (parts.empty()) parts.push_back("unnamed");
    const auto flat = [&] {
        std::string joined;
        for (const auto& part : parts) joined += (joined.empty() ? "" : "_") + part;
        return sandbox + "/" + joined;
    };
    std::string path = sandbox;
    for (size_t k = 0; k + 1 < parts.size(); ++k) {
        path += "/" + parts[k];
        if (is_symlink(path)) return is_symlink(flat()) ? flat() + ".replayed" : flat();
        ::mkdir(path.c_str(), 0755);  // another rank may have made it: fine
    }
    const std::string file = path + "/" + parts.back();
    return is_symlink(file) ? file + ".replayed" : file;
}

}  // namespace htrace::replay
