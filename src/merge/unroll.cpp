#include "merge/unroll.hpp"

#include <algorithm>

namespace htrace {

size_t nested_size(const Sequence& seq)
{
    size_t n = 0;
    for (const auto& node : seq) n += 1 + (node.is_loop() ? nested_size(node.loop().body) : 0);
    return n;
}

bool may_unroll(const Node& node)
{
    if (!node.is_loop() || !node.loop().iterations.is_exact()) return false;
    const auto iterations = static_cast<size_t>(std::max<int64_t>(node.loop().iterations.exact(), 0));
    return iterations * nested_size(node.loop().body) <= kMaxUnrolledNodes;
}

void keep_share(Sequence& seq, uint64_t part, uint64_t whole)
{
    for (auto& node : seq) {
        if (node.is_loop()) {
            keep_share(node.loop().body, part, whole);
            continue;
        }
        const auto share = [part, whole](TimeStats& t) {
            t.count = std::max<uint64_t>(t.count * part / whole, t.count > 0 ? 1 : 0);
            t.m2 = t.m2 * static_cast<double>(part) / static_cast<double>(whole);
        };
        share(node.event().compute);
        share(node.event().in_call);
        for (auto& group : node.event().compute_by_rank) share(group.compute);
    }
}

void append_unrolled(Sequence& out, Loop loop)
{
    const auto iterations = static_cast<uint64_t>(std::max<int64_t>(loop.iterations.exact(), 0));
    // What the last iteration leaves out ran one time fewer.
    const auto cut = loop.body.end() - static_cast<std::ptrdiff_t>(loop.last_leaves_out);
    Sequence rest(std::make_move_iterator(cut), std::make_move_iterator(loop.body.end()));
    loop.body.erase(cut, loop.body.end());
    keep_share(loop.body, 1, std::max<uint64_t>(iterations, 1));
    keep_share(rest, 1, std::max<uint64_t>(iterations, 2) - 1);
    for (uint64_t k = 0; k < iterations; ++k) {
        out.insert(out.end(), loop.body.begin(), loop.body.end());
        if (k + 1 < iterations) out.insert(out.end(), rest.begin(), rest.end());
    }
}

}  // namespace htrace
