"""The one table of the MPI functions h-trace models.

Every wrapper (C, Fortran mpif.h / `use mpi`, Fortran `use mpi_f08`) and the list of operations the
trace knows are generated from this table by generate_wrappers.py. Any MPI function of the MPI
library's mpi.h that is not listed here is still wrapped, recorded by name as an opaque event and
counted.

Each entry names the function (without `MPI_`), its kind, and its C parameters as in the MPI
standard, each followed by `:role` when the tracer reads it. The generator checks the parameter
types against the mpi.h in use, so an MPI library whose prototypes differ fails the build instead of
silently losing a wrapper.

Kinds (what the recorder does with the call):
  init, finalize     the tracer's own start and end
  send, recv         point-to-point; `peer` is the destination or the requested source
  sendrecv           both at once; `peer` is the destination, `source` the source
  probe              like recv, but moves no data
  persistent_init    makes a persistent send or receive request (`persistent`), which moves nothing yet
  start              starts persistent requests (`requests`): each one a send or receive from then on
  request_free       frees `requests`, whether pending or not
  cancel             asks to cancel `requests` (whether it did, their completion says)
  completion         Wait/Test family: completes requests
  collective         every collective; `root` where there is one
  comm_create        makes a communicator (`newcomm`, or `newcomm_later` once its request completes)
                     from `comm`
  comm_free          frees `freecomm`
  io                 MPI-IO on file `file` (bytes written: count+datatype; read: recvcount+recvtype)
  buffer             attaches (`buffer_size`) or detaches the buffer buffered sends go through
  one_sided          a one-sided call of the origin alone on window `win`: data movement to or from
                     `peer` (count+datatype at the origin, target_count+target_type at the target,
                     recvcount+recvtype the result of Get_accumulate), or synchronization (lock_type,
                     assertion, group)

Roles and what the trace makes of them:
  count+datatype     send-side bytes (count x type size); for Bcast/Reduce/Allreduce/Scan/Exscan the
                     bytes of the one buffer description
  recvcount+recvtype receive-side bytes
  sendcounts, recvcounts   per-peer counts: bytes are their sum over the communicator
  sendtypes, recvtypes     per-peer types (Alltoallw and friends)
  sendbuf            only to see MPI_IN_PLACE: then the send side of an operation that also has a
                     receive side carries no bytes
  recvbuf            likewise (the root of Scatter and Scatterv): then its receive side carries none
  peer, source, root ranks in `comm`; stored relative to the caller (see docs/design.md, "Endpoints and values")
  tag, recvtag, comm, newcomm, newcomm_later, freecomm
  request            the request an operation creates
  persistent         the persistent request an init creates (inactive until started)
  message, matched_message   the message handle Mprobe/Improbe return, and the one Mrecv/Imrecv take
  requests+request_count   the requests a completion call looks at (read before the call)
  status, statuses   what matched (the tracer substitutes its own for MPI_STATUS(ES)_IGNORE)
  index, flag, outcount, indices   what a completion call reports

  win, newwin, freewin     the window used, made, freed; win_size its size in bytes
  target_count+target_type target-side bytes of one-sided calls
  assertion, lock_type, group   one-sided synchronization's arguments (group: its ranks, as peers)

  file, newfile, freefile  the file used, opened, closed
  filename           a file's name (a pattern where ranks' names show the rank)
  amode, whence      File_open's access mode, a seek's whence
  offset             an explicit offset or a seek's, in etypes of the view
  disp, etype, filetype    a view: its displacement in bytes, its etype and filetype
  file_size, file_size_out the size set, or got
  buffer_size        MPI_Buffer_attach's size in bytes

Send-side bytes of Scatter/Scatterv count only at the root, receive-side bytes of Gather/Gatherv
only at the root, as MPI says those arguments are significant only there.
"""

SEND = "const void *buf:sendbuf, int count:count, MPI_Datatype datatype:datatype, int dest:peer, int tag:tag, MPI_Comm comm:comm"
ISEND = SEND + ", MPI_Request *request:request"
COLL_SR = ("const void *sendbuf:sendbuf, int sendcount:count, MPI_Datatype sendtype:datatype, "
           "void *recvbuf:recvbuf, int recvcount:recvcount, MPI_Datatype recvtype:recvtype")
REDUCE_BODY = "const void *sendbuf:sendbuf, void *recvbuf, int count:count, MPI_Datatype datatype:datatype, MPI_Op op"
V_ALLTOALL = ("const void *sendbuf:sendbuf, const int sendcounts[]:sendcounts, const int sdispls[], "
              "MPI_Datatype sendtype:datatype, void *recvbuf, const int recvcounts[]:recvcounts, "
              "const int rdispls[], MPI_Datatype recvtype:recvtype")
W_ALLTOALL = ("const void *sendbuf:sendbuf, const int sendcounts[]:sendcounts, const int sdispls[], "
              "const MPI_Datatype sendtypes[]:sendtypes, void *recvbuf, const int recvcounts[]:recvcounts, "
              "const int rdispls[], const MPI_Datatype recvtypes[]:recvtypes")
W_NEIGHBOR = ("const void *sendbuf:sendbuf, const int sendcounts[]:sendcounts, const MPI_Aint sdispls[], "
              "const MPI_Datatype sendtypes[]:sendtypes, void *recvbuf, const int recvcounts[]:recvcounts, "
              "const MPI_Aint rdispls[], const MPI_Datatype recvtypes[]:recvtypes")
GATHERV = ("const void *sendbuf:sendbuf, int sendcount:count, MPI_Datatype sendtype:datatype, void *recvbuf, "
           "const int recvcounts[]:recvcounts, const int displs[], MPI_Datatype recvtype:recvtype")
SCATTERV = ("const void *sendbuf:sendbuf, const int sendcounts[]:sendcounts, const int displs[], "
            "MPI_Datatype sendtype:datatype, void *recvbuf:recvbuf, int recvcount:recvcount, MPI_Datatype recvtype:recvtype")
FILE = "MPI_File fh:file"
WRITE_BUF = "const void *buf, int count:count, MPI_Datatype datatype:datatype"
READ_BUF = "void *buf, int count:recvcount, MPI_Datatype datatype:recvtype"
ROOT = "int root:root"
COMM = "MPI_Comm comm:comm"
REQ = "MPI_Request *request:request"
WIN = "MPI_Win win:win"
RMA_ORIGIN = "const void *origin_addr, int origin_count:count, MPI_Datatype origin_datatype:datatype"
RMA_RESULT = "void *result_addr, int result_count:recvcount, MPI_Datatype result_datatype:recvtype"
RMA_TARGET = ("int target_rank:peer, MPI_Aint target_disp, int target_count:target_count, "
              "MPI_Datatype target_datatype:target_type")


def _collective(name, params):
    """A blocking collective and its non-blocking twin (`I` prefix, one more request argument)."""
    return [(name, "collective", params), ("I" + name[0].lower() + name[1:], "collective", params + ", " + REQ)]


FUNCTIONS = [
    ("Init", "init", "int *argc, char ***argv"),
    ("Init_thread", "init", "int *argc, char ***argv, int required, int *provided"),
    ("Finalize", "finalize", ""),

    ("Send", "send", SEND),
    ("Bsend", "send", SEND),
    ("Ssend", "send", SEND),
    ("Rsend", "send", SEND),
    ("Isend", "send", ISEND),
    ("Ibsend", "send", ISEND),
    ("Issend", "send", ISEND),
    ("Irsend", "send", ISEND),
    ("Recv", "recv", "void *buf, int count:recvcount, MPI_Datatype datatype:recvtype, int source:peer, int tag:tag, "
                     "MPI_Comm comm:comm, MPI_Status *status:status"),
    ("Irecv", "recv", "void *buf, int count:recvcount, MPI_Datatype datatype:recvtype, int source:peer, int tag:tag, "
                      "MPI_Comm comm:comm, MPI_Request *request:request"),
    ("Sendrecv", "sendrecv",
     "const void *sendbuf, int sendcount:count, MPI_Datatype sendtype:datatype, int dest:peer, int sendtag:tag, "
     "void *recvbuf, int recvcount:recvcount, MPI_Datatype recvtype:recvtype, int source:source, int recvtag:recvtag, "
     "MPI_Comm comm:comm, MPI_Status *status:status"),
    ("Sendrecv_replace", "sendrecv",
     "void *buf, int count:count, MPI_Datatype datatype:datatype, int dest:peer, int sendtag:tag, "
     "int source:source, int recvtag:recvtag, MPI_Comm comm:comm, MPI_Status *status:status"),
    ("Probe", "probe", "int source:peer, int tag:tag, MPI_Comm comm:comm, MPI_Status *status:status"),
    ("Iprobe", "probe", "int source:peer, int tag:tag, MPI_Comm comm:comm, int *flag:flag, MPI_Status *status:status"),

    # Persistent requests, matched probes and receives, cancel and free: one block, so that what
    # changes here stays together.
    ("Send_init", "persistent_init", SEND + ", MPI_Request *request:persistent"),
    ("Bsend_init", "persistent_init", SEND + ", MPI_Request *request:persistent"),
    ("Ssend_init", "persistent_init", SEND + ", MPI_Request *request:persistent"),
    ("Rsend_init", "persistent_init", SEND + ", MPI_Request *request:persistent"),
    ("Recv_init", "persistent_init", "void *buf, int count:recvcount, MPI_Datatype datatype:recvtype, int source:peer, "
                                     "int tag:tag, MPI_Comm comm:comm, MPI_Request *request:persistent"),
    ("Start", "start", "MPI_Request *request:requests"),
    ("Startall", "start", "int count:request_count, MPI_Request array_of_requests[]:requests"),
    ("Request_free", "request_free", "MPI_Request *request:requests"),
    ("Cancel", "cancel", "MPI_Request *request:requests"),
    ("Mprobe", "probe", "int source:peer, int tag:tag, MPI_Comm comm:comm, MPI_Message *message:message, "
                        "MPI_Status *status:status"),
    ("Improbe", "probe", "int source:peer, int tag:tag, MPI_Comm comm:comm, int *flag:flag, "
                         "MPI_Message *message:message, MPI_Status *status:status"),
    ("Mrecv", "recv", "void *buf, int count:recvcount, MPI_Datatype type:recvtype, MPI_Message *message:matched_message, "
                      "MPI_Status *status:status"),
    ("Imrecv", "recv", "void *buf, int count:recvcount, MPI_Datatype type:recvtype, "
                       "MPI_Message *message:matched_message, MPI_Request *request:request"),

    ("Wait", "completion", "MPI_Request *request:requests, MPI_Status *status:status"),
    ("Waitall", "completion", "int count:request_count, MPI_Request array_of_requests[]:requests, "
                              "MPI_Status array_of_statuses[]:statuses"),
    ("Waitany", "completion", "int count:request_count, MPI_Request array_of_requests[]:requests, int *index:index, "
                              "MPI_Status *status:status"),
    ("Waitsome", "completion", "int incount:request_count, MPI_Request array_of_requests[]:requests, "
                               "int *outcount:outcount, int array_of_indices[]:indices, "
                               "MPI_Status array_of_statuses[]:statuses"),
    ("Test", "completion", "MPI_Request *request:requests, int *flag:flag, MPI_Status *status:status"),
    ("Testall", "completion", "int count:request_count, MPI_Request array_of_requests[]:requests, int *flag:flag, "
                              "MPI_Status array_of_statuses[]:statuses"),
    ("Testany", "completion", "int count:request_count, MPI_Request array_of_requests[]:requests, int *index:index, "
                              "int *flag:flag, MPI_Status *status:status"),
    ("Testsome", "completion", "int incount:request_count, MPI_Request array_of_requests[]:requests, "
                               "int *outcount:outcount, int array_of_indices[]:indices, "
                               "MPI_Status array_of_statuses[]:statuses"),

    *_collective("Barrier", COMM),
    *_collective("Bcast", "void *buffer, int count:count, MPI_Datatype datatype:datatype, " + ROOT + ", " + COMM),
    *_collective("Reduce", REDUCE_BODY + ", " + ROOT + ", " + COMM),
    *_collective("Allreduce", REDUCE_BODY + ", " + COMM),
    *_collective("Gather", COLL_SR + ", " + ROOT + ", " + COMM),
    *_collective("Gatherv", GATHERV + ", " + ROOT + ", " + COMM),
    *_collective("Scatter", COLL_SR + ", " + ROOT + ", " + COMM),
    *_collective("Scatterv", SCATTERV + ", " + ROOT + ", " + COMM),
    *_collective("Allgather", COLL_SR + ", " + COMM),
    *_collective("Allgatherv", GATHERV + ", " + COMM),
    *_collective("Alltoall", COLL_SR + ", " + COMM),
    *_collective("Alltoallv", V_ALLTOALL + ", " + COMM),
    *_collective("Alltoallw", W_ALLTOALL + ", " + COMM),
    *_collective("Reduce_scatter", "const void *sendbuf:sendbuf, void *recvbuf, const int recvcounts[]:recvcounts, "
                                   "MPI_Datatype datatype:recvtype, MPI_Op op, " + COMM),
    *_collective("Reduce_scatter_block", "const void *sendbuf:sendbuf, void *recvbuf, int recvcount:recvcount, "
                                         "MPI_Datatype datatype:recvtype, MPI_Op op, " + COMM),
    *_collective("Scan", REDUCE_BODY + ", " + COMM),
    *_collective("Exscan", REDUCE_BODY + ", " + COMM),
    *_collective("Neighbor_allgather", COLL_SR + ", " + COMM),
    *_collective("Neighbor_allgatherv", GATHERV + ", " + COMM),
    *_collective("Neighbor_alltoall", COLL_SR + ", " + COMM),
    *_collective("Neighbor_alltoallv", V_ALLTOALL + ", " + COMM),
    *_collective("Neighbor_alltoallw", W_NEIGHBOR + ", " + COMM),

    ("Comm_dup", "comm_create", "MPI_Comm comm:comm, MPI_Comm *newcomm:newcomm"),
    ("Comm_dup_with_info", "comm_create", "MPI_Comm comm:comm, MPI_Info info, MPI_Comm *newcomm:newcomm"),
    ("Comm_split", "comm_create", "MPI_Comm comm:comm, int color, int key, MPI_Comm *newcomm:newcomm"),
    ("Comm_split_type", "comm_create", "MPI_Comm comm:comm, int split_type, int key, MPI_Info info, "
                                       "MPI_Comm *newcomm:newcomm"),
    ("Comm_create", "comm_create", "MPI_Comm comm:comm, MPI_Group group, MPI_Comm *newcomm:newcomm"),
    ("Comm_create_group", "comm_create", "MPI_Comm comm:comm, MPI_Group group:group, int tag, MPI_Comm *newcomm:newcomm"),
    ("Cart_create", "comm_create", "MPI_Comm comm_old:comm, int ndims, const int dims[], const int periods[], "
                                   "int reorder, MPI_Comm *comm_cart:newcomm"),
    ("Cart_sub", "comm_create", "MPI_Comm comm:comm, const int remain_dims[], MPI_Comm *newcomm:newcomm"),
    ("Graph_create", "comm_create", "MPI_Comm comm_old:comm, int nnodes, const int index[], const int edges[], "
                                    "int reorder, MPI_Comm *comm_graph:newcomm"),
    ("Dist_graph_create_adjacent", "comm_create",
     "MPI_Comm comm_old:comm, int indegree, const int sources[], const int sourceweights[], int outdegree, "
     "const int destinations[], const int destweights[], MPI_Info info, int reorder, "
     "MPI_Comm *comm_dist_graph:newcomm"),
    ("Dist_graph_create", "comm_create",
     "MPI_Comm comm_old:comm, int n, const int sources[], const int degrees[], const int destinations[], "
     "const int weights[], MPI_Info info, int reorder, MPI_Comm *comm_dist_graph:newcomm"),
    ("Intercomm_merge", "comm_create", "MPI_Comm intercomm:comm, int high, MPI_Comm *newintracomm:newcomm"),
    ("Comm_free", "comm_free", "MPI_Comm *comm:freecomm"),

    # Communicators completed by a request, with a remote group, or freed by disconnecting. MPI may
    # fill Comm_idup's new handle only when its request completes: `newcomm_later` keeps where to
    # read it then.
    ("Comm_idup", "comm_create", "MPI_Comm comm:comm, MPI_Comm *newcomm:newcomm_later, MPI_Request *request:request"),
    ("Intercomm_create", "comm_create", "MPI_Comm local_comm:comm, int local_leader, MPI_Comm peer_comm, "
                                        "int remote_leader, int tag, MPI_Comm *newintercomm:newcomm"),
    ("Comm_disconnect", "comm_free", "MPI_Comm *comm:freecomm"),

    # One-sided communication. Creating, freeing and fencing a window are collectives over its
    # communicator; the rest is made by the origin alone, `peer` being the target rank.
    *[(name, "collective", params) for name, params in [
        ("Win_create", "void *base, MPI_Aint size:win_size, int disp_unit, MPI_Info info, " + COMM + ", "
                       "MPI_Win *win:newwin"),
        ("Win_allocate", "MPI_Aint size:win_size, int disp_unit, MPI_Info info, " + COMM + ", void *baseptr, "
                         "MPI_Win *win:newwin"),
        ("Win_allocate_shared", "MPI_Aint size:win_size, int disp_unit, MPI_Info info, " + COMM + ", void *baseptr, "
                                "MPI_Win *win:newwin"),
        ("Win_create_dynamic", "MPI_Info info, " + COMM + ", MPI_Win *win:newwin"),
        ("Win_free", "MPI_Win *win:freewin"),
        ("Win_fence", "int assert_flags:assertion, " + WIN),
    ]],
    *[(name, "one_sided", params) for name, params in [
        ("Put", RMA_ORIGIN + ", " + RMA_TARGET + ", " + WIN),
        ("Get", "void" + RMA_ORIGIN[len("const void"):] + ", " + RMA_TARGET + ", " + WIN),
        ("Accumulate", RMA_ORIGIN + ", " + RMA_TARGET + ", MPI_Op op, " + WIN),
        ("Get_accumulate", RMA_ORIGIN + ", " + RMA_RESULT + ", " + RMA_TARGET + ", MPI_Op op, " + WIN),
        ("Fetch_and_op", "const void *origin_addr, void *result_addr, MPI_Datatype datatype:datatype, "
                         "int target_rank:peer, MPI_Aint target_disp, MPI_Op op, " + WIN),
        ("Compare_and_swap", "const void *origin_addr, const void *compare_addr, void *result_addr, "
                             "MPI_Datatype datatype:datatype, int target_rank:peer, MPI_Aint target_disp, " + WIN),
        ("Rput", RMA_ORIGIN + ", " + RMA_TARGET + ", " + WIN + ", " + REQ),
        ("Rget", "void" + RMA_ORIGIN[len("const void"):] + ", " + RMA_TARGET + ", " + WIN + ", " + REQ),
        ("Raccumulate", RMA_ORIGIN + ", " + RMA_TARGET + ", MPI_Op op, " + WIN + ", " + REQ),
        ("Rget_accumulate", RMA_ORIGIN + ", " + RMA_RESULT + ", " + RMA_TARGET + ", MPI_Op op, " + WIN + ", " + REQ),
        ("Win_lock", "int lock_type:lock_type, int rank:peer, int assert_flags:assertion, " + WIN),
        ("Win_unlock", "int rank:peer, " + WIN),
        ("Win_lock_all", "int assert_flags:assertion, " + WIN),
        ("Win_unlock_all", WIN),
        ("Win_flush", "int rank:peer, " + WIN),
        ("Win_flush_local", "int rank:peer, " + WIN),
        ("Win_flush_all", WIN),
        ("Win_flush_local_all", WIN),
        ("Win_post", "MPI_Group group:group, int assert_flags:assertion, " + WIN),
        ("Win_start", "MPI_Group group:group, int assert_flags:assertion, " + WIN),
        ("Win_complete", WIN),
        ("Win_wait", WIN),
    ]],

    # MPI-IO. A file is opened and closed by every rank of its communicator; reads and writes move
    # `count` x `datatype` at an explicit offset (`_at`), the rank's own file pointer or the shared
    # one, alone or collectively (`_all`, `_ordered`, split into `_begin`/`_end`), blocking or not
    # (`i` prefix: a request that completion calls complete). Offsets are in units of the view's
    # etype, as MPI takes them.
    *[(name, "io", params) for name, params in [
        ("File_open", COMM + ", const char *filename:filename, int amode:amode, MPI_Info info, MPI_File *fh:newfile"),
        ("File_close", "MPI_File *fh:freefile"),
        ("File_delete", "const char *filename:filename, MPI_Info info"),
        ("File_set_size", FILE + ", MPI_Offset size:file_size"),
        ("File_preallocate", FILE + ", MPI_Offset size:file_size"),
        ("File_get_size", FILE + ", MPI_Offset *size:file_size_out"),
        ("File_set_view", FILE + ", MPI_Offset disp:disp, MPI_Datatype etype:etype, MPI_Datatype filetype:filetype, "
                          "const char *datarep, MPI_Info info"),
        ("File_seek", FILE + ", MPI_Offset offset:offset, int whence:whence"),
        ("File_seek_shared", FILE + ", MPI_Offset offset:offset, int whence:whence"),
        ("File_sync", FILE),
        *[(f"File_{verb}_at{all_}", FILE + ", MPI_Offset offset:offset, " + (WRITE_BUF if verb == "write" else READ_BUF) +
           ", MPI_Status *status:status") for verb in ("read", "write") for all_ in ("", "_all")],
        *[(f"File_i{verb}_at{all_}", FILE + ", MPI_Offset offset:offset, " + (WRITE_BUF if verb == "write" else READ_BUF) +
           ", " + REQ) for verb in ("read", "write") for all_ in ("", "_all")],
        *[(f"File_i{verb}{how}", FILE + ", " + (WRITE_BUF if verb == "write" else READ_BUF) + ", " + REQ)
          for verb in ("read", "write") for how in ("", "_all", "_shared")],
        *[(f"File_{verb}{how}", FILE + ", " + (WRITE_BUF if verb == "write" else READ_BUF) +
           ", MPI_Status *status:status") for verb in ("read", "write") for how in ("", "_all", "_shared", "_ordered")],
        *[(f"File_{verb}_at_all_begin", FILE + ", MPI_Offset offset:offset, " + (WRITE_BUF if verb == "write" else READ_BUF))
          for verb in ("read", "write")],
        *[(f"File_{verb}{how}_begin", FILE + ", " + (WRITE_BUF if verb == "write" else READ_BUF))
          for verb in ("read", "write") for how in ("_all", "_ordered")],
        *[(f"File_{verb}{how}_end", FILE + (", const void *buf" if verb == "write" else ", void *buf") +
           ", MPI_Status *status:status") for verb in ("read", "write") for how in ("_at_all", "_all", "_ordered")],
    ]],

    # Added with trace format 15. A trace names operations by their place in this table: new functions
    # go at its end, so that traces of earlier builds keep their meaning (trace_file.cpp reads them).
    # The buffer buffered sends go through: replay attaches one as large where the program did.
    ("Buffer_attach", "buffer", "void *buffer, int size:buffer_size"),
    ("Buffer_detach", "buffer", "void *buffer_addr, int *size"),
    # Memory a dynamic window exposes: replay attaches as much, and detaches it, where the program did.
    ("Win_attach", "one_sided", WIN + ", void *base, MPI_Aint size:win_size"),
    ("Win_detach", "one_sided", WIN + ", const void *base"),
]

# Wrapped by no generated wrapper at all: handle conversions and clocks are not communication, are
# called by the tracer itself, or (Pcontrol) take C varargs that cannot be forwarded.
NOT_WRAPPED = {
    "Wtime", "Wtick", "Pcontrol",
    "Comm_c2f", "Comm_f2c", "Type_c2f", "Type_f2c", "Group_c2f", "Group_f2c", "Request_c2f", "Request_f2c",
    "Op_c2f", "Op_f2c", "Info_c2f", "Info_f2c", "Win_c2f", "Win_f2c", "File_c2f", "File_f2c",
    "Errhandler_c2f", "Errhandler_f2c", "Message_c2f", "Message_f2c", "Status_c2f", "Status_f2c",
    "Status_c2f08", "Status_f082c", "Status_f2f08", "Status_f082f", "Session_c2f", "Session_f2c",
}

# Fortran entry points whose arguments are not the C ones plus ierror; their opaque Fortran
# wrappers are left out (the C wrapper still counts them for C programs).
FORTRAN_DIFFERENT = {"Comm_spawn", "Comm_spawn_multiple", "Get_address", "Address", "Aint_add", "Aint_diff",
                     "Type_create_f90_real", "Type_create_f90_complex", "Type_create_f90_integer"}
