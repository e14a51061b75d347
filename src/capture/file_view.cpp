#include "capture/file_view.hpp"

#include <cstddef>
#include <vector>

namespace htrace::capture {
namespace {

struct Block {
    int64_t start;
    int64_t length;
};

// The selected bytes' offsets from the type's true lower bound, in type-map order: the type packs a
// buffer whose bytes hold their own offset, one byte plane (bits 0-7, 8-15 ...) at a time.
std::vector<int64_t> selected_offsets(MPI_Datatype type, MPI_Aint true_lb, MPI_Aint true_extent, int size)
{
    std::vector<unsigned char> buffer(static_cast<size_t>(true_extent));
    std::vector<unsigned char> packed(static_cast<size_t>(size));
    std::vector<int64_t> offsets(static_cast<size_t>(size), 0);
    for (int plane = 0; plane < 4 && (int64_t(1) << (8 * plane)) < true_extent; ++plane) {
        for (size_t j = 0; j < buffer.size(); ++j) buffer[j] = static_cast<unsigned char>(j >> (8 * plane));
        int position = 0;
        PMPI_Pack(buffer.data() - true_lb, 1, type, packed.data(), size, &position, MPI_COMM_SELF);
        for (size_t i = 0; i < packed.size(); ++i) offsets[i] |= int64_t(packed[i]) << (8 * plane);
    }
    return offsets;
}

}  // namespace

FileViewLayout file_view_layout(MPI_Datatype filetype)
{
    FileViewLayout layout;
    int size = 0;
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    if (filetype == MPI_DATATYPE_NULL || PMPI_Type_size(filetype, &size) != MPI_SUCCESS ||
        PMPI_Type_get_extent(filetype, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_get_true_extent(filetype, &true_lb, &true_extent) != MPI_SUCCESS) {
        return layout;
    }
    layout.extent = extent;
    if (size == extent && lb == 0 && true_lb == 0 && true_extent == extent) return layout;  // plain bytes
    layout.contiguous = false;
    if (size <= 0 || true_extent > kMostViewBytes) return layout;
    std::vector<Block> blocks;
    for (int64_t offset : selected_offsets(filetype, true_lb, true_extent, size)) {
        if (!blocks.empty() && blocks.back().start + blocks.back().length == offset) {
            ++blocks.back().length;
        } else {
            blocks.push_back({offset, 1});
        }
    }
    const int64_t stride = blocks.size() > 1 ? blocks[1].start - blocks[0].start : 0;
    for (size_t i = 1; i < blocks.size(); ++i) {
        if (blocks[i].length != blocks[0].length || blocks[i].start - blocks[i - 1].start != stride) return layout;
    }
    layout.strided = true;
    layout.lb = true_lb + blocks[0].start;
    layout.block = blocks[0].length;
    layout.blocks = static_cast<int64_t>(blocks.size());
    layout.stride = stride;
    return layout;
}

}  // namespace htrace::capture
