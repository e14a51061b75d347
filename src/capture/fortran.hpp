#pragma once
// What Fortran callers pass differently from C ones.

#include "capture/call.hpp"

#include <mpi.h>

namespace htrace::capture {

// The Fortran MPI_IN_PLACE is an address of its own; the tracer only needs to recognise it.
const void* fortran_buffer(const void* buffer);

// Fortran indices are 1-based.
inline int index_from_fortran(MPI_Fint index) { return index == MPI_UNDEFINED ? index : index - 1; }

// How many entries the per-peer arrays of a collective have (communicator or remote group size,
// or the neighbour counts of a topology).
int send_peer_count(const Call& call);
int recv_peer_count(const Call& call);

// The MPI library's own definition of a Fortran entry point (`mpi_send_`), not the wrapper of the
// same name, for libraries without `pmpi_` ones (SimGrid's SMPI). Aborts, saying so, where there is none.
void* library_entry(const char* name);

}  // namespace htrace::capture
