#include "capture/communicators.hpp"

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

const CommInfo& Communicators::lookup(MPI_Comm comm)
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

int Communicators::remote_leader_world_rank(MPI_Comm comm) const
{
    MPI_Group group = MPI_GROUP_NULL;
    PMPI_Comm_remote_group(comm, &group);
    const int leader = world_rank_of_first(group);
    PMPI_Group_free(&group);
    return leader;
}

}  // namespace htrace::capture
