#!/usr/bin/env python3
"""Checks the file names of a trace against the names the traced program logged it opened.

    check_file_names.py --h-dump PATH --trace TRACE --log-dir DIR --ranks N

The program logs each call that names a file with the name it gave (`file=NAME`, programs/call_log.h).
The trace names a file in its events by a key (`file_name=` in `h-dump --sequence`), and its header
maps each key to a name for all ranks: a literal name, or a pattern with the rank in it (`{rank}`,
`{rank:0N}`; braces of the name doubled). Checks, per rank, in the order of its calls:

  1. the trace's calls that name a file are the program's, and each key, expanded through the header
     for that rank, is the name the rank gave;
  2. where every rank gave the same name at that call, every rank's key is the same and its header
     name is that name, literal: a name ranks share is one name, whatever digits of it some rank's
     number spells;
  3. where every rank gave a name of its own (all different), every rank's key is the same and its
     header name is a pattern: names that follow the rank are one pattern;
  4. the header names no file the events do not name.

Calls where ranks gave names neither all alike nor all different, or ranks that named different
numbers of files, are not compared by 2 and 3 (the check says so). Exit status 0 when all hold, 1 on
a difference, 2 when the comparison cannot be made.
"""

import argparse
import re
import subprocess
import sys

from check_calls import CannotCompare, read_call_logs, run_h_dump

RANK_FIELD = re.compile(r"\{rank(?::0(\d+))?\}")


def has_rank(stored):
    """Whether a header name has a rank field (doubled braces are the name's own)."""
    return any(piece is not None for piece in split_stored(stored)[1])


def split_stored(stored):
    """A header name as its literal pieces and, between them, rank fields (their zero-padded width, 0
    where not padded): pieces[0] field[0] pieces[1] ... Doubled braces become single ones."""
    pieces, fields, text, at = [], [], "", 0
    while at < len(stored):
        if stored[at] in "{}" and stored[at + 1:at + 2] == stored[at]:
            text += stored[at]
            at += 2
            continue
        field = RANK_FIELD.match(stored, at) if stored[at] == "{" else None
        if field:
            pieces.append(text)
            fields.append(int(field.group(1) or 0))
            text = ""
            at = field.end()
            continue
        text += stored[at]
        at += 1
    pieces.append(text)
    return pieces, fields


def name_for(stored, rank):
    """The name a header name stands for on `rank`."""
    pieces, fields = split_stored(stored)
    out = pieces[0]
    for width, piece in zip(fields, pieces[1:]):
        out += str(rank).zfill(width) + piece
    return out


def trace_file_calls(h_dump, trace):
    """{rank: [(function, key)]} of the calls that name a file, in each rank's order (h-dump --sequence)."""
    command = [h_dump, "--sequence", trace]
    print("$", " ".join(command), flush=True)
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise CannotCompare(f"h-dump --sequence exited with {result.returncode}:\n{result.stderr.strip()}")
    calls = {}
    for line in result.stdout.splitlines():
        words = line.split()
        if len(words) < 3:
            continue
        fields = dict(word.split("=", 1) for word in words[3:] if "=" in word)
        if "file_name" in fields:
            calls.setdefault(int(words[0]), []).append((words[2], fields["file_name"]))
    return calls


def check(header, traced, logged, ranks):
    """The differences as lines."""
    differences = []
    for rank in range(ranks):
        mine = traced.get(rank, [])
        expected = logged[rank]
        if [function for function, _ in mine] != [function for function, _ in expected]:
            differences.append(f"rank {rank}: the trace's calls that name a file {[f for f, _ in mine]}, the "
                               f"program's {[f for f, _ in expected]}")
            continue
        for index, ((function, key), (_, name)) in enumerate(zip(mine, expected)):
            if key not in header:
                differences.append(f"rank {rank}: call {index} ({function}) names key {key}, not in the header")
            elif name_for(header[key], rank) != name:
                differences.append(f"rank {rank}: call {index} ({function}) names {header[key]!r}, which is "
                                   f"{name_for(header[key], rank)!r} on rank {rank}; the program gave {name!r}")
    if differences:
        return differences

    counts = {len(logged[rank]) for rank in range(ranks)}
    if len(counts) != 1:
        print("check_file_names: ranks named different numbers of files: alike and per-rank names not compared")
    else:
        for index in range(counts.pop()):
            names = [logged[rank][index][1] for rank in range(ranks)]
            keys = {traced[rank][index][1] for rank in range(ranks)}
            function = logged[0][index][0]
            if len(set(names)) == 1:
                if len(keys) != 1 or has_rank(header[next(iter(keys))]):
                    differences.append(f"call {index} ({function}): every rank gave {names[0]!r}, the trace names "
                                       f"{sorted(header[k] for k in keys)}: not one literal name")
                else:
                    print(f"check_file_names: call {index} ({function}): {names[0]!r} on every rank is one "
                          f"literal name")
            elif len(set(names)) == ranks:
                if len(keys) != 1 or not has_rank(header[next(iter(keys))]):
                    differences.append(f"call {index} ({function}): every rank gave a name of its own "
                                       f"({names[0]!r} ...), the trace names {sorted(header[k] for k in keys)}: "
                                       f"not one pattern")
                else:
                    print(f"check_file_names: call {index} ({function}): each rank's own name is one pattern, "
                          f"{header[next(iter(keys))]!r}")
            else:
                print(f"check_file_names: call {index} ({function}): names neither alike nor all different: "
                      f"not compared")

    used = {key for calls in traced.values() for _, key in calls}
    unused = sorted(name for key, name in header.items() if key not in used)
    if unused:
        differences.append(f"the header names files no event names: {unused}")
    return differences


def main():
    parser = argparse.ArgumentParser(usage=__doc__.split("\n\n")[1])
    parser.add_argument("--h-dump", required=True, help="the h-dump executable")
    parser.add_argument("--trace", required=True, help="the trace file to check")
    parser.add_argument("--log-dir", required=True, help="the directory the program wrote rank.<N> logs into")
    parser.add_argument("--ranks", required=True, type=int, help="how many ranks the job ran")
    args = parser.parse_args()
    try:
        header = run_h_dump(args.h_dump, args.trace, ("--json",))["file_names"]
        traced = trace_file_calls(args.h_dump, args.trace)
        logged = {rank: [(call.function, call.fields["file"]) for call in calls if "file" in call.fields]
                  for rank, calls in read_call_logs(args.log_dir, args.ranks).items()}
    except (CannotCompare, KeyError, ValueError, OSError, subprocess.TimeoutExpired) as error:
        print(f"check_file_names: cannot compare: {error}")
        return 2
    if not any(logged.values()):
        print("check_file_names: cannot compare: the program logged no file names (file=)")
        return 2
    differences = check(header, traced, logged, args.ranks)
    for line in differences:
        print(f"check_file_names: {line}")
    if not differences:
        print(f"check_file_names: {sum(len(calls) for calls in logged.values())} calls name the files the program "
              f"gave, in {len(header)} names")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
