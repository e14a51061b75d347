// MPI-IO events of the walk become calls on this rank's files: the name its rank had (a pattern
// expanded for the rank), and the bytes and offsets recorded or drawn.
#include "replay/rank_stream.hpp"
#include "trace/file_names.hpp"

#include <algorithm>

namespace htrace::replay {

void RankStream::io(const Event& e, size_t me)
{
    Item& item = add(ItemKind::io, e);
    item.creates_request = creates_request(e.op);
    ScheduledCall& call = item.call;
    call.kind = CallKind::io;
    for (size_t k = 0; k < e.params.size(); ++k) {
        const auto v = value(me, k);
        if (!v) continue;
        switch (e.params[k].role) {
        case Role::comm: call.comm = *v; break;
        case Role::file: call.file = *v; break;
        case Role::file_name: {
            const auto found = trace_.header.file_names.find(*v);
            // A trace without the name (damaged, or a key drawn from a histogram): a name of its own.
            call.path = found != trace_.header.file_names.end() ? file_name_for(found->second, me_)
                                                                 : "file-" + std::to_string(*v);
            break;
        }
        case Role::amode: call.amode = *v; break;
        case Role::offset: call.offset = *v; break;  // a seek's may be negative (MPI_SEEK_CUR, _END)
        case Role::whence: call.whence = *v; break;
        case Role::file_size: call.file_size = std::max<int64_t>(0, *v); break;
        case Role::view_disp: call.view_disp = std::max<int64_t>(0, *v); break;
        case Role::view_lb: call.view.lb = *v; break;
        case Role::view_block: call.view.block = *v; break;
        case Role::view_blocks: call.view.blocks = *v; break;  // -1: a layout the trace does not hold
        case Role::view_stride: call.view.stride = *v; break;
        case Role::view_extent: call.view.extent = *v; break;
        case Role::bytes: call.bytes = std::max<int64_t>(0, *v); break;
        case Role::recv_bytes: call.recv_bytes = std::max<int64_t>(0, *v); break;
        default: break;
        }
    }
}

}  // namespace htrace::replay
