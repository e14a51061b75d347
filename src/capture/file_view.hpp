#pragma once
// The layout of an MPI-IO view's filetype, as replay needs it to put the bytes where the application
// did: the bytes one filetype selects, as strided blocks in a tile of its extent.

#include <mpi.h>

#include <cstdint>

namespace htrace::capture {

struct FileViewLayout {
    bool contiguous = true;  // every byte of the tile, from its start: nothing to record
    bool strided = false;    // else: blocks as below; neither: a layout replay makes contiguous
    int64_t lb = 0;          // the first block's offset in the tile
    int64_t block = 0;       // bytes per block
    int64_t blocks = 0;
    int64_t stride = 0;      // bytes from one block's start to the next's
    int64_t extent = 0;      // the tile
};

// Reads the filetype's type map by packing position-numbered bytes through it, which works for any
// constructor; a filetype spanning more than kMostViewBytes is not read (strided = false).
FileViewLayout file_view_layout(MPI_Datatype filetype);

inline constexpr int64_t kMostViewBytes = int64_t(64) << 20;

}  // namespace htrace::capture
