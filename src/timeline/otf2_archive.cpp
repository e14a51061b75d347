#include "timeline/otf2_archive.hpp"

#include "trace/operation.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <cmath>
#include <numeric>

namespace htrace::timeline {

namespace {

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }
OTF2_FlushCallbacks flush_callbacks{pre_flush, post_flush};

// OTF2 prints each error, and each step of its unwinding, to stderr; the tools say one line, so the
// first message is kept for it instead.
OTF2_ErrorCode keep_first_error(void* first, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                                va_list arguments)
{
    auto& message = *static_cast<std::string*>(first);
    if (message.empty() && format != nullptr) {
        char text[512];
        std::vsnprintf(text, sizeof text, format, arguments);
        message = text;
    }
    return code;
}

constexpr uint64_t kTicksPerSecond = 1'000'000'000;

uint64_t ticks(double seconds)
{
    return seconds > 0 ? static_cast<uint64_t>(std::llround(seconds * double(kTicksPerSecond))) : 0;
}

// The OTF2 operation of a collective, by its MPI name without "MPI_" and a non-blocking "I".
std::optional<OTF2_CollectiveOp> collective_op(Op op)
{
    static const std::map<std::string_view, OTF2_CollectiveOp> by_name{
        {"Barrier", OTF2_COLLECTIVE_OP_BARRIER},     {"Bcast", OTF2_COLLECTIVE_OP_BCAST},
        {"Gather", OTF2_COLLECTIVE_OP_GATHER},       {"Gatherv", OTF2_COLLECTIVE_OP_GATHERV},
        {"Scatter", OTF2_COLLECTIVE_OP_SCATTER},     {"Scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
        {"Allgather", OTF2_COLLECTIVE_OP_ALLGATHER}, {"Allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
        {"Alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},   {"Alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
        {"Alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW}, {"Allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
        {"Reduce", OTF2_COLLECTIVE_OP_REDUCE},       {"Reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
        {"Reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
        {"Scan", OTF2_COLLECTIVE_OP_SCAN},           {"Exscan", OTF2_COLLECTIVE_OP_EXSCAN},
    };
    switch (operation_kind(op)) {
    case OperationKind::comm_create:
        return OTF2_COLLECTIVE_OP_CREATE_HANDLE;
    case OperationKind::comm_free:
        return OTF2_COLLECTIVE_OP_DESTROY_HANDLE;
    case OperationKind::collective:
        break;
    default:
        return std::nullopt;
    }
    std::string_view name = operation_name(op);
    if (name.starts_with("MPI_")) name.remove_prefix(4);
    if (const auto found = by_name.find(name); found != by_name.end()) return found->second;
    if (name.starts_with("I")) {
        if (const auto found = by_name.find(name.substr(1)); found != by_name.end()) return found->second;
    }
    return std::nullopt;
}

OTF2_RegionRole region_role(Op op)
{
    switch (operation_kind(op)) {
    case OperationKind::send:
    case OperationKind::recv:
    case OperationKind::sendrecv:
    case OperationKind::probe:
        return OTF2_REGION_ROLE_POINT2POINT;
    case OperationKind::collective: {
        const auto collective = collective_op(op);
        if (collective == OTF2_COLLECTIVE_OP_BARRIER) return OTF2_REGION_ROLE_BARRIER;
        if (collective == OTF2_COLLECTIVE_OP_BCAST || collective == OTF2_COLLECTIVE_OP_SCATTER ||
            collective == OTF2_COLLECTIVE_OP_SCATTERV)
            return OTF2_REGION_ROLE_COLL_ONE2ALL;
        if (collective == OTF2_COLLECTIVE_OP_GATHER || collective == OTF2_COLLECTIVE_OP_GATHERV ||
            collective == OTF2_COLLECTIVE_OP_REDUCE)
            return OTF2_REGION_ROLE_COLL_ALL2ONE;
        return collective ? OTF2_REGION_ROLE_COLL_ALL2ALL : OTF2_REGION_ROLE_COLL_OTHER;
    }
    case OperationKind::one_sided:
        return OTF2_REGION_ROLE_RMA;
    case OperationKind::io:
        return OTF2_REGION_ROLE_FILE_IO;
    default:
        return OTF2_REGION_ROLE_FUNCTION;
    }
}

}  // namespace

struct Otf2ArchiveWriter::Archive {
    OTF2_Archive* handle = nullptr;
};

Otf2ArchiveWriter::Otf2ArchiveWriter(const std::string& directory, const std::string& title, int32_t world_size)
    : archive_(std::make_unique<Archive>()), directory_(directory), world_size_(world_size)
{
    std::vector<Rank> world(static_cast<size_t>(std::max(world_size, 0)));
    std::iota(world.begin(), world.end(), 0);
    comm_of(world);
    if (std::error_code ignored; std::filesystem::exists(std::filesystem::path(directory) / "traces.otf2", ignored)) {
        error_ = directory + " already holds an OTF2 archive: give a new directory";
        return;
    }
    OTF2_Error_RegisterCallback(keep_first_error, &first_error_);
    archive_->handle = OTF2_Archive_Open(directory.c_str(), "traces", OTF2_FILEMODE_WRITE, 1024 * 1024,
                                         4 * 1024 * 1024, OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (archive_->handle == nullptr) {
        error_ = "cannot make the OTF2 archive in " + directory + (first_error_.empty() ? "" : ": " + first_error_);
        return;
    }
    fail("set its flush callbacks", OTF2_Archive_SetFlushCallbacks(archive_->handle, &flush_callbacks, nullptr));
    fail("set its collectives", OTF2_Archive_SetSerialCollectiveCallbacks(archive_->handle));
    fail("name its creator", OTF2_Archive_SetCreator(archive_->handle, "h-trace"));
    fail("describe it", OTF2_Archive_SetDescription(archive_->handle, title.c_str()));
    fail("open its event files", OTF2_Archive_OpenEvtFiles(archive_->handle));
}

Otf2ArchiveWriter::~Otf2ArchiveWriter()
{
    if (archive_->handle != nullptr) OTF2_Archive_Close(archive_->handle);
}

void Otf2ArchiveWriter::fail(const std::string& what, int code)
{
    if (code != OTF2_SUCCESS && error_.empty()) {
        error_ = "cannot write the OTF2 archive in " + directory_ + ": " +
                 (first_error_.empty() ? OTF2_Error_GetDescription(static_cast<OTF2_ErrorCode>(code)) : first_error_) +
                 " (as OTF2 tried to " + what + ")";
    }
}

uint32_t Otf2ArchiveWriter::region_of(Op op)
{
    return regions_.try_emplace(op, static_cast<uint32_t>(regions_.size())).first->second;
}

uint32_t Otf2ArchiveWriter::comm_of(const std::vector<Rank>& members)
{
    const auto [found, added] = comms_.try_emplace(members, static_cast<uint32_t>(comms_.size()));
    if (added) comm_members_.push_back(&found->first);
    return found->second;
}

void Otf2ArchiveWriter::add(const RankTimeline& rank)
{
    if (!error_.empty()) return;
    OTF2_EvtWriter* writer = OTF2_Archive_GetEvtWriter(archive_->handle, static_cast<OTF2_LocationRef>(rank.rank()));
    if (writer == nullptr) {
        error_ = "OTF2 could not make the event writer of rank " + std::to_string(rank.rank());
        return;
    }
    std::vector<uint32_t> comms;
    for (const auto& members : rank.communicators()) comms.push_back(comm_of(members));
    uint64_t& events = events_[rank.rank()];
    uint64_t clock = 0;  // OTF2 wants each location's times in order
    for (const TimedCall& call : rank.calls()) {
        const uint64_t start = std::max(clock, ticks(call.start));
        const uint64_t end = std::max(start, ticks(call.end));
        clock = end;
        last_tick_ = std::max(last_tick_, end);
        const uint32_t region = region_of(call.op);
        fail("write an event", OTF2_EvtWriter_Enter(writer, nullptr, start, region));
        const auto size = [](int64_t value) { return static_cast<uint64_t>(std::max<int64_t>(value, 0)); };
        // A message record where the peer is known: sent at the call's start, received at its end.
        const auto message = [&](bool sent, Rank peer, int64_t tag, int64_t bytes) {
            if (peer < 0) return;
            const auto partner = static_cast<uint32_t>(peer);
            const auto on_tag = static_cast<uint32_t>(std::max<int64_t>(tag, 0));
            fail("write an event", sent ? OTF2_EvtWriter_MpiSend(writer, nullptr, start, partner, 0, on_tag, size(bytes))
                                        : OTF2_EvtWriter_MpiRecv(writer, nullptr, end, partner, 0, on_tag, size(bytes)));
            ++events;
        };
        events += 2;
        switch (operation_kind(call.op)) {
        case OperationKind::send:
            message(true, call.peer, call.tag, call.bytes);
            break;
        case OperationKind::recv:
            message(false, call.peer, call.tag, call.bytes);
            break;
        case OperationKind::sendrecv:
            message(true, call.peer, call.tag, call.bytes);
            message(false, call.source, call.recv_tag, call.recv_bytes);
            break;
        default:
            if (const auto collective = collective_op(call.op)) {
                const uint32_t root = call.root >= 0 ? static_cast<uint32_t>(call.root) : OTF2_UNDEFINED_UINT32;
                fail("write an event", OTF2_EvtWriter_MpiCollectiveBegin(writer, nullptr, start));
                fail("write an event", OTF2_EvtWriter_MpiCollectiveEnd(writer, nullptr, end, *collective, comms[call.comm],
                                                                       root, size(call.bytes), size(call.recv_bytes)));
                events += 2;
            }
        }
        fail("write an event", OTF2_EvtWriter_Leave(writer, nullptr, end, region));
    }
    fail("close an event writer", OTF2_Archive_CloseEvtWriter(archive_->handle, writer));
}

void Otf2ArchiveWriter::write_definitions()
{
    fail("close its event files", OTF2_Archive_CloseEvtFiles(archive_->handle));
    fail("open its definition files", OTF2_Archive_OpenDefFiles(archive_->handle));
    for (const auto& [rank, events] : events_) {
        OTF2_DefWriter* local = OTF2_Archive_GetDefWriter(archive_->handle, static_cast<OTF2_LocationRef>(rank));
        if (local != nullptr) fail("close a definition writer", OTF2_Archive_CloseDefWriter(archive_->handle, local));
    }
    fail("close its definition files", OTF2_Archive_CloseDefFiles(archive_->handle));

    OTF2_GlobalDefWriter* defs = OTF2_Archive_GetGlobalDefWriter(archive_->handle);
    if (defs == nullptr) {
        error_ = error_.empty() ? "OTF2 could not make the global definition writer" : error_;
        return;
    }
    uint32_t strings = 0;
    const auto string = [&](const std::string& text) {
        fail("write a definition", OTF2_GlobalDefWriter_WriteString(defs, strings, text.c_str()));
        return strings++;
    };
    fail("write a definition", OTF2_GlobalDefWriter_WriteClockProperties(defs, kTicksPerSecond, 0, last_tick_ + 1,
                                                                         OTF2_UNDEFINED_TIMESTAMP));
    const uint32_t empty = string("");
    const uint32_t machine = string("job");
    fail("write a definition", OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, 0, machine, string("machine"),
                                                                        OTF2_UNDEFINED_SYSTEM_TREE_NODE));
    std::vector<Op> by_region(regions_.size());  // OTF2 readers want definitions in the order of their ids
    for (const auto& [op, region] : regions_) by_region[region] = op;
    for (uint32_t region = 0; region < by_region.size(); ++region) {
        const Op op = by_region[region];
        const uint32_t name = string(std::string(operation_name(op)));
        fail("write a definition", OTF2_GlobalDefWriter_WriteRegion(defs, region, name, name, empty, region_role(op),
                                                                    OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0));
    }
    std::vector<uint64_t> locations;
    for (Rank r = 0; r < world_size_; ++r) {
        const uint32_t name = string("rank " + std::to_string(r));
        fail("write a definition", OTF2_GlobalDefWriter_WriteLocationGroup(defs, static_cast<uint32_t>(r), name,
                                                                           OTF2_LOCATION_GROUP_TYPE_PROCESS, 0,
                                                                           OTF2_UNDEFINED_LOCATION_GROUP));
        const auto events = events_.find(r);
        fail("write a definition",
             OTF2_GlobalDefWriter_WriteLocation(defs, static_cast<OTF2_LocationRef>(r), name, OTF2_LOCATION_TYPE_CPU_THREAD,
                                                events == events_.end() ? 0 : events->second, static_cast<uint32_t>(r)));
        locations.push_back(static_cast<uint64_t>(r));
    }
    // The locations of MPI ranks, then one group per communicator: its members as world ranks, which
    // are their indices in the first.
    fail("write a definition", OTF2_GlobalDefWriter_WriteGroup(defs, 0, string("MPI ranks"), OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                                               OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                               static_cast<uint32_t>(locations.size()), locations.data()));
    for (uint32_t comm = 0; comm < comm_members_.size(); ++comm) {
        const std::vector<uint64_t> members(comm_members_[comm]->begin(), comm_members_[comm]->end());
        const uint32_t name = string(comm == 0 ? "MPI_COMM_WORLD" : "communicator " + std::to_string(comm));
        fail("write a definition", OTF2_GlobalDefWriter_WriteGroup(defs, comm + 1, name, OTF2_GROUP_TYPE_COMM_GROUP,
                                                                   OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                                                   static_cast<uint32_t>(members.size()), members.data()));
        fail("write a definition", OTF2_GlobalDefWriter_WriteComm(defs, comm, name, comm + 1,
                                                                  comm == 0 ? OTF2_UNDEFINED_COMM : 0, OTF2_COMM_FLAG_NONE));
    }
}

std::string Otf2ArchiveWriter::finish()
{
    if (archive_->handle == nullptr) return error_;
    write_definitions();
    fail("close the archive", OTF2_Archive_Close(archive_->handle));
    archive_->handle = nullptr;
    return error_;
}

}  // namespace htrace::timeline
