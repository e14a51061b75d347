#!/usr/bin/env python3
"""Issue 31's measure of readable code: the longest functions of src/ and proofs/, and how many are
over the limit (80 lines), by universal-ctags' start and end lines of each function (a lambda
counts inside the function that holds it). Needs the `universal-ctags` package.

    function_lengths.py [--limit 80] [--top 10] [DIR ...]     (default: src proofs)
"""
import argparse
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SUFFIXES = {".c", ".cpp", ".h", ".hpp"}


def functions(dirs):
    """(lines, path, line, name) of every function definition under `dirs`."""
    files = sorted(str(p.relative_to(ROOT)) for d in dirs for p in (ROOT / d).rglob("*") if p.suffix in SUFFIXES)
    out = subprocess.run(["ctags", "--fields=+ne", "--kinds-C++=f", "--kinds-C=f", "-o", "-"] + files,
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    found = []
    for line in out.splitlines():
        fields = line.split("\t")
        extra = dict(f.split(":", 1) for f in fields[3:] if ":" in f)
        if "line" in extra and "end" in extra:
            start, end = int(extra["line"]), int(extra["end"])
            found.append((end - start + 1, fields[1], start, fields[0]))
    return sorted(found, reverse=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dirs", nargs="*", default=["src", "proofs"])
    parser.add_argument("--limit", type=int, default=80)
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    found = functions(args.dirs)
    over = [f for f in found if f[0] > args.limit]
    print(f"{len(found)} functions in {', '.join(args.dirs)}; {len(over)} over {args.limit} lines")
    print("\n| lines | function | where |\n| --- | --- | --- |")
    for lines, path, start, name in found[:max(args.top, len(over))]:
        print(f"| {lines} | `{name}` | {path}:{start} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
