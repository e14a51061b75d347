#!/usr/bin/env python3
"""Generates the MPI wrappers and the operation list from mpi_functions.py and the mpi.h in use.

usage: generate_wrappers.py [--foreign] MPICC OUT_DIR   (MPICC preprocesses mpi.h; or a preprocessed mpi.h file)

--foreign: the mpi.h of another MPI than the one the trace's operation lists come from (SimGrid's
SMPI, for the tracer's simulated build). Only the wrappers are written; modelled functions that mpi.h
lacks are left out, prototypes that differ from the table's only in `const` follow mpi.h, opaque
wrappers find their operation by name (the real build's list numbers them), and the Fortran wrappers
call the library's own `mpi_x_` entry points (found at run time), since such a library need not have
`pmpi_x_` ones. `use mpi_f08` entry points are left out.

Writes into OUT_DIR:
  operation_list.inc   HTRACE_OPERATION(Name, kind) for every modelled function (read by src/trace)
  opaque_list.inc      HTRACE_OPAQUE("MPI_Name") for every other function of mpi.h that is wrapped
  wrappers_c.cpp       one C wrapper per function (MPI_X calls PMPI_X)
  wrappers_fortran.cpp the Fortran entry points (mpi_x_ and its name variants, mpi_x_f08_), which
                       call the Fortran PMPI entry points of the library, so the application's
                       Fortran semantics (1-based indices, MPI_IN_PLACE, ...) stay the library's own.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_functions  # noqa: E402


def parse_params(text):
    """'const int counts[]:sendcounts, MPI_Comm comm' -> [(c_type, name, role)]; arrays become pointers."""
    params = []
    for raw in [p.strip() for p in text.split(",") if p.strip()]:
        decl, _, role = raw.partition(":")
        m = re.match(r"^(.*?)(\w+)\s*(\[\s*\])?$", decl.strip())
        if not m:
            sys.exit(f"generate_wrappers: cannot parse parameter '{raw}'")
        ctype = m.group(1).strip() + (" *" if m.group(3) else "")
        params.append((normalize_type(ctype), m.group(2), role or None))
    return params


def normalize_type(ctype):
    ctype = re.sub(r"\s*\*\s*", "*", ctype.strip())
    return re.sub(r"\s+", " ", ctype)


def header_prototypes(preprocessed):
    """name -> (return type, [param types]) for every `MPI_X` function declared in mpi.h."""
    text = re.sub(r"\s+", " ", preprocessed)
    text = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", text)
    protos = {}
    for m in re.finditer(r"(?:^|[;}])\s*(?:extern\s+)?([\w\s\*]+?)\s*\b(MPI_\w+)\s*\(([^()]*)\)\s*(?=;)", text):
        ret, name, params = m.group(1).strip(), m.group(2), m.group(3).strip()
        if "typedef" in ret.split():
            continue
        ret = ret.split()[-1] if ret.split() else ret
        if params in ("", "void"):
            types = []
        else:
            types = []
            for p in params.split(","):
                p = p.strip()
                arr = p.endswith("]")
                p = re.sub(r"\[\s*\w*\s*\]$", "", p).strip()
                # drop the parameter name, if there is one
                mm = re.match(r"^(.*?[\s\*])(\w+)$", p)
                if mm and mm.group(1).strip() not in ("", "const", "struct", "unsigned"):
                    p = mm.group(1)
                types.append(normalize_type(p + ("*" if arr else "")))
        protos[name] = (ret, types, params)
    return protos


# ---- C wrappers -----------------------------------------------------------------------------------

C_BEFORE = {  # role -> code run before the PMPI call; NAME is the argument
    "sendbuf": "a.sendbuf = NAME;", "recvbuf": "a.recvbuf = NAME;", "count": "a.count = NAME;", "datatype": "a.datatype = NAME;",
    "recvcount": "a.recvcount = NAME;", "recvtype": "a.recvtype = NAME;",
    "sendcounts": "a.sendcounts = NAME;", "recvcounts": "a.recvcounts = NAME;",
    "sendtypes": "a.sendtypes = NAME;", "recvtypes": "a.recvtypes = NAME;",
    "peer": "a.peer = NAME;", "source": "a.source = NAME;", "root": "a.root = NAME;",
    "tag": "a.tag = NAME;", "recvtag": "a.recvtag = NAME;", "comm": "a.comm = NAME;",
    "freecomm": "a.comm = *NAME;", "request_count": "a.request_count = NAME;",
    "matched_message": "a.matched_message = *NAME;",
    "win": "a.win = NAME;", "freewin": "a.win = *NAME;", "win_size": "a.win_size = NAME;",
    "target_count": "a.target_count = NAME;", "target_type": "a.target_type = NAME;",
    "assertion": "a.assertion = NAME;", "lock_type": "a.lock_type = NAME;", "group": "a.group = NAME;",
    "file": "a.file = NAME;", "freefile": "a.file = *NAME;", "filename": "a.filename = NAME;",
    "amode": "a.amode = NAME;", "offset": "a.offset = NAME;", "whence": "a.whence = NAME;",
    "file_size": "a.file_size = NAME;", "disp": "a.disp = NAME;", "etype": "a.etype = NAME;",
    "filetype": "a.filetype = NAME;", "buffer_size": "a.buffer_size = NAME;",
}
C_AFTER = {  # role -> code run after the PMPI call
    "newcomm": "a.newcomm = *NAME;", "newcomm_later": "a.newcomm_slot = NAME;", "newwin": "a.newwin = *NAME;",
    "request": "a.request = *NAME;", "index": "a.index = *NAME;",
    "flag": "a.flag = *NAME;", "outcount": "a.outcount = *NAME;", "indices": "a.indices = NAME;",
    "persistent": "a.request = *NAME;", "message": "a.message = *NAME;",
    "newfile": "a.file = *NAME;", "file_size_out": "a.file_size = *NAME;",
}

F_BEFORE = {
    "sendbuf": "a.sendbuf = htrace::capture::fortran_buffer(NAME);",
    "recvbuf": "a.recvbuf = htrace::capture::fortran_buffer(NAME);",
    "count": "a.count = *NAME;", "datatype": "a.datatype = PMPI_Type_f2c(*NAME);",
    "recvcount": "a.recvcount = *NAME;", "recvtype": "a.recvtype = PMPI_Type_f2c(*NAME);",
    "sendcounts": "a.sendcounts = NAME;", "recvcounts": "a.recvcounts = NAME;",
    "peer": "a.peer = *NAME;", "source": "a.source = *NAME;", "root": "a.root = *NAME;",
    "tag": "a.tag = *NAME;", "recvtag": "a.recvtag = *NAME;", "comm": "a.comm = PMPI_Comm_f2c(*NAME);",
    "freecomm": "a.comm = PMPI_Comm_f2c(*NAME);", "request_count": "a.request_count = *NAME;",
    "matched_message": "a.matched_message = PMPI_Message_f2c(*NAME);",
    "win": "a.win = PMPI_Win_f2c(*NAME);", "freewin": "a.win = PMPI_Win_f2c(*NAME);",
    "win_size": "a.win_size = *reinterpret_cast<const MPI_Aint*>(NAME);",  # INTEGER(KIND=MPI_ADDRESS_KIND)
    "target_count": "a.target_count = *NAME;", "target_type": "a.target_type = PMPI_Type_f2c(*NAME);",
    "assertion": "a.assertion = *NAME;", "lock_type": "a.lock_type = *NAME;",
    "group": "a.group = PMPI_Group_f2c(*NAME);",
    "file": "a.file = PMPI_File_f2c(*NAME);", "freefile": "a.file = PMPI_File_f2c(*NAME);",
    # A Fortran string: not terminated, its length passed by value after the arguments.
    "filename": "a.filename = NAME; a.filename_length = static_cast<int>(NAME_len);",
    "amode": "a.amode = *NAME;", "offset": "a.offset = *NAME;", "whence": "a.whence = *NAME;",
    "file_size": "a.file_size = *NAME;", "disp": "a.disp = *NAME;", "etype": "a.etype = PMPI_Type_f2c(*NAME);",
    "filetype": "a.filetype = PMPI_Type_f2c(*NAME);", "buffer_size": "a.buffer_size = *NAME;",
}
F_LATE_BEFORE = {  # need the scalars above first
    "sendtypes": "a.sendtypes = call.types_from_fortran(NAME, htrace::capture::send_peer_count(call));",
    "recvtypes": "a.recvtypes = call.types_from_fortran(NAME, htrace::capture::recv_peer_count(call));",
}
F_AFTER = {
    "newcomm": "a.newcomm = PMPI_Comm_f2c(*NAME);", "newcomm_later": "a.newcomm_fortran_slot = NAME;",
    "newwin": "a.newwin = PMPI_Win_f2c(*NAME);",
    "request": "a.request = PMPI_Request_f2c(*NAME);",
    "index": "a.index = htrace::capture::index_from_fortran(*NAME);", "flag": "a.flag = *NAME;",
    "outcount": "a.outcount = *NAME;", "indices": "a.indices = call.indices_from_fortran(NAME, a.outcount);",
    "persistent": "a.request = PMPI_Request_f2c(*NAME);", "message": "a.message = PMPI_Message_f2c(*NAME);",
    "newfile": "a.file = PMPI_File_f2c(*NAME);", "file_size_out": "a.file_size = *NAME;",
}


def c_wrapper(name, kind, params, header_types=None):
    args = ", ".join(p[1] for p in params)
    types = header_types or [t for t, _, _ in params]
    decl = ", ".join(f"{t} {n}" if not t.endswith("*") else f"{t[:-1]} *{n}"
                     for t, (_, n, _) in zip(types, params)) or "void"
    lines = [f'extern "C" int MPI_{name}({decl})', "{",
             f"    htrace::capture::Call call(htrace::Op::{name}, HTRACE_CALL_SITE);",
             f"    if (!call.recording()) return PMPI_{name}({args});"]
    body, pass_args, after = [], [], []
    roles = {p[2]: p[1] for p in params if p[2]}
    for ctype, pname, role in params:
        arg = pname
        if role in C_BEFORE:
            body.append(C_BEFORE[role].replace("NAME", pname))
        elif role == "requests":
            n = roles.get("request_count")
            body.append(f"a.requests = call.keep_requests({pname}, {n if n else 1});")
            if kind == "start":  # MPI may hand a started request back under another handle
                after.append(f"a.started = {pname};")
        elif role == "status":
            body.append(f"MPI_Status* status_seen = call.status_or_own({pname});")
            arg = "status_seen"
            after.append("a.status = status_seen;")
        elif role == "statuses":
            body.append(f"MPI_Status* statuses_seen = call.statuses_or_own({pname}, a.request_count);")
            arg = "statuses_seen"
            after.append("a.statuses = statuses_seen;")
        elif role in C_AFTER:
            after.append(C_AFTER[role].replace("NAME", pname))
        elif role:
            sys.exit(f"generate_wrappers: MPI_{name}: unknown role '{role}'")
        pass_args.append(arg)
    if body or after:
        lines.append("    htrace::capture::CallArgs& a = call.args();")
    lines += ["    " + b for b in body]
    if kind == "finalize":
        # The tracer merges and writes while MPI still works.
        lines += ["    call.finish(MPI_SUCCESS);", f"    return PMPI_{name}({', '.join(pass_args)});", "}", ""]
        return "\n".join(lines)
    lines.append(f"    const int rc = PMPI_{name}({', '.join(pass_args)});")
    if after:
        lines.append("    if (rc == MPI_SUCCESS) {")
        lines += ["        " + x for x in after]
        lines.append("    }")
    lines += ["    call.finish(rc);", "    return rc;", "}", ""]
    return "\n".join(lines)


# MPI_Abort does not return: the tracer writes the rank's partial file before the library's runs.
def before_abort(errorcode):
    return [f"    if (call.recording()) htrace::capture::before_abort({errorcode});"]


def opaque_operation(name, index, foreign):
    """The expression a wrapper of an unmodelled function records its operation as."""
    if foreign:
        return f'[] {{ static const htrace::Op op = htrace::operation_by_name("MPI_{name}"); return op; }}()'
    return f"htrace::opaque_operation({index})"


def c_opaque_wrapper(name, index, proto_params, arg_names, foreign=False):
    args = ", ".join(arg_names)
    return "\n".join([
        f'extern "C" int MPI_{name}({proto_params})', "{",
        f"    htrace::capture::Call call({opaque_operation(name, index, foreign)}, HTRACE_CALL_SITE);"]
        + (before_abort(arg_names[1]) if name == "Abort" else []) + [
        f"    if (!call.recording()) return PMPI_{name}({args});",
        f"    const int rc = PMPI_{name}({args});",
        "    call.finish(rc);", "    return rc;", "}", ""])


def named_params(proto_params):
    """Gives every parameter of an mpi.h prototype a name (a0, a1, ...) so the wrapper can pass it on."""
    if proto_params.strip() in ("", "void"):
        return "void", []
    out, names = [], []
    for i, p in enumerate(proto_params.split(",")):
        p = p.strip()
        arr = re.search(r"(\[[^\]]*\]\s*)+$", p)
        base = p[:arr.start()].strip() if arr else p
        mm = re.match(r"^(.*?[\s\*])(\w+)$", base)
        if mm and mm.group(1).strip() not in ("", "const", "struct", "unsigned"):
            base = mm.group(1).strip()
        out.append(f"{base} a{i}{arr.group(0).strip() if arr else ''}")
        names.append(f"a{i}")
    return ", ".join(out), names


# ---- Fortran wrappers -----------------------------------------------------------------------------

def fortran_names(name):
    low = "mpi_" + name.lower()
    return [low + "_", low, low + "__", low.upper()]


def fortran_param_decl(ctype, pname):
    if ctype.endswith("void*"):
        return f"void* {pname}"
    if ctype.endswith("char*"):
        return f"char* {pname}"
    if ctype.startswith("MPI_Offset"):  # INTEGER(KIND=MPI_OFFSET_KIND)
        return f"MPI_Offset* {pname}"
    return f"MPI_Fint* {pname}"


def fortran_string_lengths(params):
    """The hidden lengths of a Fortran binding's string arguments, passed by value after ierror."""
    return [f"{n}_len" for t, n, _ in params if t.endswith("char*")]


def fortran_params(name, params):
    if name == "Init":
        return []
    if name == "Init_thread":
        return [("int", "required", None), ("int*", "provided", None)]
    return params


def fortran_target(name, suffix, decl, foreign):
    """How a Fortran wrapper reaches the library: the name it calls, the lines before the wrapper that
    declare it, and the lines that start the wrapper's body. A foreign library's own entry point has
    the wrapper's name, so the wrapper finds it at run time and calls it through a pointer."""
    impl = f"mpi_{name.lower()}{suffix}"
    if not foreign:
        target = f"pmpi_{name.lower()}{suffix}"
        return target, [f'extern "C" void {target}({decl}) __attribute__((weak));', ""], []
    target = f"library_{impl}"
    return target, [], [f"    using Entry = void (*)({decl});",
                        f'    static const auto {target} = reinterpret_cast<Entry>(htrace::capture::library_entry("{impl}"));']


def fortran_wrapper(name, kind, params, flavour, foreign=False):
    """flavour 'f77' (mpif.h and `use mpi`) or 'f08' (`use mpi_f08`, optional ierror)."""
    fparams = fortran_params(name, params)
    lengths = fortran_string_lengths(fparams)
    decl = ", ".join([fortran_param_decl(t, n) for t, n, _ in fparams] + ["MPI_Fint* ierror"] +
                     [f"size_t {n}" for n in lengths])
    args = ", ".join([n for _, n, _ in fparams] + ["ierror"] + lengths)
    suffix = "_f08_" if flavour == "f08" else "_"
    impl = f"mpi_{name.lower()}{suffix}"
    roles = {p[2]: p[1] for p in fparams if p[2]}
    body, late, after, pass_args = [], [], [], []
    for ctype, pname, role in fparams:
        arg = pname
        if role in F_BEFORE:
            body.append(F_BEFORE[role].replace("NAME", pname))
        elif role in F_LATE_BEFORE:
            late.append(F_LATE_BEFORE[role].replace("NAME", pname))
        elif role == "requests":
            n = roles.get("request_count")
            late.append(f"a.requests = call.requests_from_fortran({pname}, {'*' + n if n else 1});")
            if kind == "start":  # MPI may hand a started request back under another handle
                after.append(f"a.started = call.started_from_fortran({pname}, {'*' + n if n else 1});")
        elif role == "status":
            body.append(f"MPI_Fint* status_seen = call.fortran_status_or_own({pname});")
            arg = "status_seen"
            after.append(f"a.status = call.status_from_fortran{'_f08' if flavour == 'f08' else ''}(status_seen);")
        elif role == "statuses":
            late.append(f"MPI_Fint* statuses_seen = call.fortran_statuses_or_own({pname}, a.request_count);")
            arg = "statuses_seen"
            after.append(f"a.statuses = call.statuses_from_fortran{'_f08' if flavour == 'f08' else ''}"
                         f"(statuses_seen, a.request_count);")
        elif role in F_AFTER:
            after.append(F_AFTER[role].replace("NAME", pname))
        elif role:
            sys.exit(f"generate_wrappers: MPI_{name}: unknown role '{role}'")
        pass_args.append(arg)
    pass_args.append("ierror")
    pass_args += lengths
    target, declared, reached = fortran_target(name, suffix, decl, foreign)
    lines = declared + [f'extern "C" void {impl}({decl})', "{"] + reached + [
             f"    htrace::capture::Call call(htrace::Op::{name}, HTRACE_CALL_SITE);",
             f"    if (!call.recording()) {{ {target}({args}); return; }}"]
    if body or late or after:
        lines.append("    htrace::capture::CallArgs& a = call.args();")
    lines += ["    " + b for b in body + late]
    if kind == "finalize":
        lines.append("    call.finish(MPI_SUCCESS);")
    lines.append(f"    {target}({', '.join(pass_args)});")
    lines.append("    const int rc = ierror != nullptr ? *ierror : MPI_SUCCESS;")
    if after:
        lines.append("    if (rc == MPI_SUCCESS) {")
        lines += ["        " + x for x in after]
        lines.append("    }")
    lines += ["    call.finish(rc);" if kind != "finalize" else "    (void)rc;", "}", ""]
    if flavour == "f77":
        for alias in fortran_names(name)[1:]:
            lines.append(f'extern "C" void {alias}({decl}) __attribute__((alias("{impl}")));')
        lines.append("")
    return "\n".join(lines)


def fortran_opaque_arity(proto_params):
    """Arguments of the Fortran binding: the C ones, ierror, and a hidden length per string."""
    if proto_params.strip() in ("", "void"):
        return 1
    params = [p for p in proto_params.split(",")]
    strings = sum(1 for p in params if re.search(r"\bchar\s*\*", p))
    return len(params) + 1 + strings


def fortran_opaque_wrapper(name, index, arity, flavour, foreign=False):
    # The Fortran bindings pass every argument by reference (and string lengths by value, in the
    # same registers), so pointer-sized pass-through is exact for the arguments the binding has.
    decl = ", ".join(f"void* a{i}" for i in range(arity))
    args = ", ".join(f"a{i}" for i in range(arity))
    suffix = "_f08_" if flavour == "f08" else "_"
    impl = f"mpi_{name.lower()}{suffix}"
    target, declared, reached = fortran_target(name, suffix, decl, foreign)
    lines = declared + [f'extern "C" void {impl}({decl})', "{"] + reached + [
             f"    htrace::capture::Call call({opaque_operation(name, index, foreign)}, HTRACE_CALL_SITE);"]
    if name == "Abort":
        lines += before_abort("*static_cast<const MPI_Fint*>(a1)")
    lines += [f"    {target}({args});",
             "    call.finish(MPI_SUCCESS);", "}", ""]
    if flavour == "f77":
        for alias in fortran_names(name)[1:]:
            lines.append(f'extern "C" void {alias}({decl}) __attribute__((alias("{impl}")));')
        lines.append("")
    return "\n".join(lines)


HEADER = """// Generated by src/capture/generate_wrappers.py from src/capture/mpi_functions.py. Do not edit.
#include "capture/call.hpp"
#include "capture/tracer.hpp"

#include <mpi.h>

// Wrappers of deprecated MPI functions call their deprecated PMPI twins on purpose.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
"""


def same_but_const(header_types, table_types):
    strip = lambda types: [t.replace("const ", "") for t in types]
    return strip(header_types) == strip(table_types)


def main():
    foreign = sys.argv[1] == "--foreign"
    source, out_dir = sys.argv[1 + foreign], sys.argv[2 + foreign]
    if source.endswith(".i"):
        with open(source) as f:
            preprocessed = f.read()
    else:
        preprocessed = subprocess.run([source, "-E", "-P", "-x", "c", "-"], input="#include <mpi.h>\n",
                                      capture_output=True, text=True, check=True).stdout
    protos = header_prototypes(preprocessed)

    modelled = {}
    for name, kind, text in mpi_functions.FUNCTIONS:
        params = parse_params(text)
        key = "MPI_" + name
        if key not in protos:
            if foreign:
                continue
            sys.exit(f"generate_wrappers: MPI_{name} is in mpi_functions.py but not in this mpi.h")
        ret, types, proto_params = protos[key]
        ours = [t for t, _, _ in params]
        if types != ours and not (foreign and same_but_const(types, ours)):
            sys.exit(f"generate_wrappers: MPI_{name}: mpi.h has ({', '.join(types)}), "
                     f"mpi_functions.py has ({', '.join(ours)})")
        modelled[name] = (kind, params, types)

    opaque = []
    for key in sorted(protos):
        name = key[4:]
        ret, types, proto_params = protos[key]
        if name in modelled or name in mpi_functions.NOT_WRAPPED or ret != "int":
            continue
        if "..." in proto_params:
            continue
        opaque.append((name, proto_params))

    os.makedirs(out_dir, exist_ok=True)
    write_wrappers(out_dir, modelled, opaque, foreign)
    if foreign:
        return
    with open(os.path.join(out_dir, "operation_list.inc"), "w") as f:
        f.write("// Generated from src/capture/mpi_functions.py. Do not edit.\n")
        for name, (kind, _, _) in modelled.items():
            f.write(f"HTRACE_OPERATION({name}, {kind})\n")
    with open(os.path.join(out_dir, "operation_args.inc"), "w") as f:
        f.write("// Generated from src/capture/mpi_functions.py: the arguments each operation has. Do not edit.\n")
        for name, (kind, params, _) in modelled.items():
            roles = " | ".join(f"arg::{r}" for _, _, r in params if r) or "0"
            f.write(f"HTRACE_OPERATION_ARGS({name}, {roles})\n")
    with open(os.path.join(out_dir, "opaque_list.inc"), "w") as f:
        f.write("// Generated from the mpi.h in use: functions recorded by name only. Do not edit.\n")
        for name, _ in opaque:
            f.write(f'HTRACE_OPAQUE("MPI_{name}")\n')


def write_wrappers(out_dir, modelled, opaque, foreign):
    with open(os.path.join(out_dir, "wrappers_c.cpp"), "w") as f:
        f.write(HEADER + "\n")
        for name, (kind, params, header_types) in modelled.items():
            f.write(c_wrapper(name, kind, params, header_types))
            f.write("\n")
        for index, (name, proto_params) in enumerate(opaque):
            decl, names = named_params(proto_params)
            f.write(c_opaque_wrapper(name, index, decl, names, foreign))
            f.write("\n")

    flavours = ["f77"] if foreign else ["f77", "f08"]
    with open(os.path.join(out_dir, "wrappers_fortran.cpp"), "w") as f:
        f.write(HEADER + '#include "capture/fortran.hpp"\n\n')
        for name, (kind, params, _) in modelled.items():
            for flavour in flavours:
                f.write(fortran_wrapper(name, kind, params, flavour, foreign))
        for index, (name, proto_params) in enumerate(opaque):
            if name in mpi_functions.FORTRAN_DIFFERENT:
                continue
            arity = fortran_opaque_arity(proto_params)
            for flavour in flavours:
                f.write(fortran_opaque_wrapper(name, index, arity, flavour, foreign))


if __name__ == "__main__":
    main()
