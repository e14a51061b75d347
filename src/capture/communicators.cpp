#include "capture/communicators.hpp"

#include "trace/hot_path.hpp"

#include <algorithm>

namespace htrace::capture {

void Communicators::start()
{
    entries_.clear();
    reserved_.clear();
    PMPI_Comm_group(MPI_COMM_WORLD, &world_group_);
    entries_.push_back({MPI_COMM_WORLD, describe(MPI_COMM_WORLD, 0)});
    entries_.push_back({MPI_COMM_SELF, describe(MPI_COMM_SELF, 1)});
}

CommInfo Communicators::describe(MPI_Comm comm, int64_t id) const
{
    CommInfo info;
    info.id = id;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    info.inter = inter != 0;
    PMPI_Comm_size(comm, &info.size);
    PMPI_Comm_rank(comm, &info.rank);
    if (info.inter) PMPI_Comm_remote_size(comm, &info.remote_size);
    return info;
}

int64_t lowest_unused(std::vector<int64_t> used, int64_t first)
{
    std::sort(used.begin(), used.end());
    int64_t id = first;
    for (int64_t u : used) {
        if (u == id) ++id;
    }
    return id;
}

int64_t Communicators::lowest_free_id() const
{
    std::vector<int64_t> used = reserved_;
    for (const auto& e : entries_) used.push_back(e.info.id);
    return lowest_unused(std::move(used), 2);
}

HTRACE_HOT const CommInfo& Communicators::lookup(MPI_Comm comm)
{
    for (const auto& e : entries_) {
        if (e.comm == comm) return e.info;
    }
    return add(comm);
}

const CommInfo& Communicators::add(MPI_Comm comm)
{
    forget_handle(comm);
    entries_.push_back({comm, describe(comm, lowest_free_id())});
    return entries_.back().info;
}

void Communicators::forget_handle(MPI_Comm comm)
{
    std::erase_if(entries_, [comm](const Entry& e) { return e.comm == comm && e.info.id > 1; });
}

int64_t Communicators::reserve()
{
    const int64_t id = lowest_free_id();
    reserved_.push_back(id);
    return id;
}

void Communicators::bind(int64_t id, MPI_Comm comm)
{
    std::erase(reserved_, id);
    if (comm == MPI_COMM_NULL) return;
    forget_handle(comm);
    entries_.push_back({comm, describe(comm, id)});
}

int64_t Communicators::remove(MPI_Comm comm)
{
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
        if (it->comm == comm && it->info.id > 1) {
            const int64_t id = it->info.id;
            entries_.erase(it);
            return id;
        }
    }
    return -1;
}

int Communicators::world_rank_of_first(MPI_Group group) const
{
    int zero = 0;
    int leader = MPI_UNDEFINED;
    PMPI_Group_translate_ranks(group, 1, &zero, world_group_, &leader);
    return leader;
}

int Communicators::leader_world_rank(MPI_Comm comm) const
{
    MPI_Group group = MPI_GROUP_NULL;
    PMPI_Comm_group(comm, &group);
    const int leader = world_rank_of_first(group);
    PMPI_Group_free(&group);
    return leader;
}

int64_t Communicators::group_key(MPI_Group group) const
{
    int n = 0;
    PMPI_Group_size(group, &n);
    std::vector<int> ranks(static_cast<size_t>(std::max(n, 0)));
    std::vector<int> world(ranks.size());
    for (int i = 0; i < n; ++i) ranks[static_cast<size_t>(i)] = i;
    PMPI_Group_translate_ranks(group, n, ranks.data(), world_group_, world.data());
    uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a over the world ranks, folded to 31 bits
    for (int r : world) {
        for (int b = 0; b < 4; ++b) {
            h ^= static_cast<uint8_t>(static_cast<uint32_t>(r) >> (8 * b));
            h *= 0x100000001b3ull;
        }
    }
    return static_cast<int64_t>((h ^ (h >> 31) ^ (h >> 62)) & 0x7fffffff);
}

void Communicators::set_topology_kind(MPI_Comm comm, int kind)
{
    for (auto& entry : entries_) {
        if (entry.comm == comm) entry.info.topology_kind = kind;
    }
}

int Communicators::topology_kind(MPI_Comm comm)
{
    int kind = MPI_UNDEFINED;
    PMPI_Topo_test(comm, &kind);
    return kind;
}

std::optional<Topology> Communicators::topology(MPI_Comm comm, int kind)
{
    if (kind == MPI_UNDEFINED) return std::nullopt;
    Topology t;
    int size = 1;
    int rank = 0;
    PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    const auto relative = [&](const std::vector<int>& ranks) {
        std::vector<int64_t> out;
        for (int r : ranks) out.push_back(((int64_t(r) - rank) % size + size) % size);
        return out;
    };
    if (kind == MPI_CART) {
        int dims = 0;
        PMPI_Cartdim_get(comm, &dims);
        std::vector<int> extent(static_cast<size_t>(dims));
        std::vector<int> periods(static_cast<size_t>(dims));
        std::vector<int> coords(static_cast<size_t>(dims));
        PMPI_Cart_get(comm, dims, extent.data(), periods.data(), coords.data());
        t.cartesian = true;
        t.dims.assign(extent.begin(), extent.end());
        for (int p : periods) t.periods.push_back(p != 0 ? 1 : 0);
    } else if (kind == MPI_GRAPH) {
        int count = 0;
        PMPI_Graph_neighbors_count(comm, rank, &count);
        std::vector<int> neighbours(static_cast<size_t>(count));
        PMPI_Graph_neighbors(comm, rank, count, neighbours.data());
        t.sources = t.destinations = relative(neighbours);
    } else {
        int in = 0;
        int out = 0;
        int weighted = 0;
        PMPI_Dist_graph_neighbors_count(comm, &in, &out, &weighted);
        // Room for at least one of each: MPI may not take a null array even for no neighbours.
        std::vector<int> sources(static_cast<size_t>(std::max(in, 1)));
        std::vector<int> destinations(static_cast<size_t>(std::max(out, 1)));
        std::vector<int> source_weights(sources.size());
        std::vector<int> destination_weights(destinations.size());
        PMPI_Dist_graph_neighbors(comm, in, sources.data(), source_weights.data(), out, destinations.data(),
                                  destination_weights.data());
        sources.resize(static_cast<size_t>(in));
        destinations.resize(static_cast<size_t>(out));
        t.sources = relative(sources);
        t.destinations = relative(destinations);
    }
    return t;
}

int Communicators::remote_leader_world_rank(MPI_Comm comm) const
{
    MPI_Group group = MPI_GROUP_NULL;
    PMPI_Comm_remote_group(comm, &group);
    const int leader = world_rank_of_first(group);
    PMPI_Group_free(&group);
    return leader;
}

}  // namespace htrace::capture
