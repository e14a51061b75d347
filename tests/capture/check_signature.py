#!/usr/bin/env python3
"""Call-site signatures are the same in every process for the same call path, under ASLR."""
import subprocess
import sys


def run(probe):
    out = subprocess.run([probe], capture_output=True, text=True, check=True).stdout.split()
    return dict(field.split("=", 1) for field in out)


def main():
    probe = sys.argv[1]
    first, second = run(probe), run(probe)
    if first["main"] == second["main"]:
        print("ASLR is off here: two runs loaded main at the same address; nothing to compare")
        return 77
    failures = []
    if first["a"] != first["a_again"]:
        failures.append("the same call site gave two signatures in one run")
    if first["a"] == first["b"]:
        failures.append("two call sites gave the same signature")
    if first["a"] == first["a_via_helper"]:
        failures.append("one call site reached through two call paths gave the same signature")
    shared = [first[key] for key in ("x", "y", "outer_x", "outer_y")]
    if len(set(shared)) != 4:
        failures.append(f"four call paths through one call site at one stack depth gave {len(set(shared))} signatures")
    if first["changed"] != "0":
        failures.append(f"a call path's signature changed {first['changed']} times while others were interleaved")
    # The probe made 4 paths' calls, each path repeated: only each path's first call may unwind.
    calls, misses, hits = int(first["calls"]), int(first["misses"]), int(first["hits"])
    if misses + hits != calls:
        failures.append(f"{calls} calls but {hits} hits and {misses} misses")
    if misses > 4:
        failures.append(f"{misses} of {calls} calls on 4 repeated call paths unwound the stack (at most 4 should)")
    for key in ("a", "b", "a_via_helper", "x", "y", "outer_x", "outer_y"):
        if first[key] != second[key]:
            failures.append(f"site {key}: {first[key]} in one run, {second[key]} in the other")
    for f in failures:
        print("FAIL:", f)
    print(f"runs: {first} / {second}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
