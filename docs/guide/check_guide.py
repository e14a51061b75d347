#!/usr/bin/env python3
"""Keeps the user guide (docs/guide/*.md) and README.md true of the tools (issue 31, points 1 and 2).

    check_guide.py --source-root DIR --h-trace PATH --h-dump PATH --h-merge PATH --h-extrap PATH
                   --h-replay PATH [--mpirun PATH] [--mpicc PATH] [--run-readme]

Without --run-readme (test `guide`), for README.md and every page of docs/guide:

- every long option (--[a-z0-9-]+) it names is one the tool it goes with takes, by the tool's own
  usage (`TOOL --help`, got and parsed as docs/man/check_man_pages.py does: one source of truth). In a
  command (a line of a ``` block, or an inline `code` span that names a tool and does not quote a tool's
  message, "h-dump: ...") an option goes with the
  last tool named before it on the command (h-replay-smpi's are h-replay's; the value of h-sweep's and
  h-whatif's --replay-arg is h-replay's). An option named alone goes with any of the tools. Options of
  other programs (mpirun's, meson's, SimGrid's, or those passed on with --mpirun-arg) must be listed
  in a comment of the page, <!-- check-guide: other-programs --oversubscribe --cfg -->, and be used
  on the page;
- every environment variable it names (MERGE_PRECISION, HTRACE_*) is one the sources under src/ read,
  and the pages together name every variable the sources read;
- every relative link (and image) leads to a file of the source tree, and a #fragment into a
  Markdown file to one of its headings;
- the README is at most 150 lines, and it and docs/guide/index.md link every other page of the guide.

With --run-readme (test `readme-commands`), runs the README's block that follows the comment
<!-- check-guide: run ... -->, line by line with `sh -c`, in a scratch directory (where `tests` is the
source tree's), with the build's tools (and mpicc, mpirun) first on PATH, and requires each line to
exit 0, trace.h and report.html to be written, and h-replay's report line.

Exit status: 0 passes, 1 fails (each problem is listed), 77 skips (--run-readme without mpirun or
mpicc). Without --mpirun, h-replay's options are not checked (said on stdout).
"""

import argparse
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "man"))
import check_man_pages as man  # noqa: E402  (the tools' usages, their options and the variables read)

SKIP = 77
MOST_README_LINES = 150
TOOLS = ["h-trace", "h-dump", "h-merge", "h-replay", "h-replay-smpi", "h-extrap", "h-sweep", "h-whatif",
         "h-report"]
# The tool whose usage lists a tool's options.
USAGE_OF = {tool: tool for tool in TOOLS} | {"h-replay-smpi": "h-replay"}
# Options whose value is itself an option of another program: of h-replay, or of no tool of ours.
PASSED_TO = {"--replay-arg": "h-replay", "--mpirun-arg": None, "--smpirun-arg": None}
SEPARATORS = {"|", "||", "&&", ";", "&"}
OTHER_PROGRAMS = re.compile(r"<!--\s*check-guide:\s*other-programs\s+(.*?)\s*-->")
RUN_MARK = re.compile(r"<!--\s*check-guide:\s*run\b")
INLINE_CODE = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# An inline span that quotes a tool's message ("h-sweep: cannot find h-trace (...; --h-trace names it)"), not a command.
MESSAGE = re.compile(r"^(?:h-[a-z0-9-]+|usage):")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


class Problems:
    def __init__(self):
        self.found = []

    def add(self, where, message):
        self.found.append(f"{where}: {message}")


def pages(source_root):
    guide = pathlib.Path(source_root) / "docs" / "guide"
    return [pathlib.Path(source_root) / "README.md"] + sorted(guide.glob("*.md"))


def words(command):
    """A command line's words, as a shell would split them where it can, else at white space."""
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def tool_of(word):
    """The tool a word runs (h-dump, build/src/replay/h-replay-smpi, "$(command -v h-replay-smpi)"), or None."""
    parts = word.strip("\"'()$`").rsplit("/", 1)[-1].split()
    return parts[-1] if parts and parts[-1] in TOOLS else None


def command_options(command):
    """(option, tool or None) for each long option of a command line: the tool is the last one named
    before the option on the command, None before any (another program's)."""
    found = []
    tool = None
    for word in words(command):
        if word in SEPARATORS:
            tool = None
            continue
        named = tool_of(word)
        if named:
            tool = named
            continue
        if not word.startswith("--"):
            if tool == "h-trace":
                tool = None  # h-trace PROGRAM ARGS: what follows is the program's
            continue
        option, _, value = word.partition("=")
        if man.LONG_OPTION.fullmatch(option):
            found.append((option, tool))
        if option in PASSED_TO and value.startswith("--"):
            found.extend((passed.rstrip("-"), PASSED_TO[option]) for passed in man.LONG_OPTION.findall(value))
    return found


def page_options(text):
    """(option, tool, line number) for every long option of a Markdown page. The tool is None for an
    option of another program, "" for one named alone (any tool's)."""
    found = []
    in_block = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            in_block = not in_block
            continue
        if in_block:
            command, hash_mark, comment = line.partition(" #")
            found.extend((option, tool, number) for option, tool in command_options(command))
            line = comment if hash_mark else ""
        prose = line
        for match in INLINE_CODE.finditer(line):
            span = match.group(2)
            if not MESSAGE.match(span) and any(tool_of(word) for word in words(span)):
                found.extend((option, tool, number) for option, tool in command_options(span))
                prose = prose.replace(match.group(0), " ", 1)
        prose = re.sub(r"<!--.*?-->", " ", prose)
        prose = LINK.sub(lambda link: link.group(0).split("](")[0], prose)
        found.extend((option.rstrip("-"), "", number) for option in man.LONG_OPTION.findall(prose))
    return found


def check_options(path, text, usages, problems):
    declared = set()
    for match in OTHER_PROGRAMS.finditer(text):
        declared |= set(match.group(1).split())
    options = {tool: man.long_options(usage) for tool, usage in usages.items()}
    every_tool = set().union(*options.values()) if options else set()
    # An option named alone can be judged only against every tool's usage (h-replay's needs mpirun).
    every_usage = set(USAGE_OF.values()) <= set(options)
    used_as_other = set()
    for option, tool, number in page_options(text):
        if option == "--help":
            continue  # every tool takes it (the C++ tools' usages do not list it); h-replay-smpi's is SimGrid's
        where = f"{path}:{number}"
        if tool is None:
            used_as_other.add(option)
            if option not in declared:
                problems.add(where, f"{option} is no option of h-trace's tools here: if it is another program's, "
                                    "list it in the page's <!-- check-guide: other-programs ... --> comment")
        elif tool == "":
            used_as_other.add(option)
            if every_usage and option not in every_tool and option not in declared:
                problems.add(where, f"{option}: no tool's --help names it")
        elif USAGE_OF[tool] in options and option not in options[USAGE_OF[tool]]:
            problems.add(where, f"{option}: {USAGE_OF[tool]} --help does not name it")
    for option in sorted(declared - used_as_other):
        problems.add(path, f"lists {option} as another program's option, but does not use it so")
    for option in sorted(declared & every_tool if every_usage else set()):
        problems.add(path, f"lists {option} as another program's option, but a tool of ours takes it")


def check_variables(path, text, read, problems):
    named = set(man.VARIABLE.findall(text))
    for name in sorted(named - set(read)):
        problems.add(path, f"names the environment variable {name}, which no source under src/ reads")
    return named


def slug(heading):
    """GitHub's anchor for a heading."""
    text = re.sub(r"`|\*\*|\*", "", heading).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found, in_block = set(), False
    for line in path.read_text(errors="replace").splitlines():
        if line.lstrip().startswith("```"):
            in_block = not in_block
        elif not in_block and (match := HEADING.match(line)):
            found.add(slug(match.group(1)))
    return found


def check_links(path, text, source_root, problems):
    """Returns the resolved Markdown files the page links to."""
    linked = set()
    root = pathlib.Path(source_root).resolve()
    for number, line in enumerate(text.splitlines(), 1):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file_part, _, fragment = target.partition("#")
            resolved = (path.parent / file_part).resolve() if file_part else path.resolve()
            where = f"{path}:{number}"
            if resolved != root and root not in resolved.parents:
                problems.add(where, f"{target} leads out of the source tree")
                continue
            if not resolved.exists():
                problems.add(where, f"{target}: no such file")
                continue
            linked.add(resolved)
            if fragment and resolved.suffix == ".md" and fragment not in anchors(resolved):
                problems.add(where, f"{target}: {resolved.name} has no heading whose anchor is #{fragment}")
    return linked


def check_pages(args, problems):
    checker = man.Checker()
    usages = man.tool_usages(args, checker)
    for failure in checker.failures:
        problems.add("usage", failure)
    if "h-replay" not in usages:
        print("SKIP h-replay's and h-replay-smpi's options, and options named alone (no h-replay usage: no mpirun)")
    read = man.read_variables(args.source_root)
    if not {"MERGE_PRECISION", "HTRACE_FILE"} <= set(read):
        problems.add(args.source_root, f"found only {sorted(read)} read under src/: is that the source tree?")
    named = set()
    links = {}
    all_pages = pages(args.source_root)
    for path in all_pages:
        if not path.is_file():
            problems.add(path, "missing")
            continue
        text = path.read_text(errors="replace")
        check_options(path, text, usages, problems)
        named |= check_variables(path, text, read, problems)
        links[path.name if path.parent.name != "guide" else f"guide/{path.name}"] = check_links(
            path, text, args.source_root, problems)
    for name in sorted(set(read) - named):
        problems.add("docs/guide", f"no page names {name}, which {read[name]} reads")
    readme = pathlib.Path(args.source_root) / "README.md"
    if readme.is_file():
        lines = len(readme.read_text().splitlines())
        if lines > MOST_README_LINES:
            problems.add(readme, f"{lines} lines, more than {MOST_README_LINES}: move detail into docs/guide")
    guide_pages = [path.resolve() for path in all_pages[1:] if path.name != "index.md"]
    for linking in ("README.md", "guide/index.md"):
        for page in guide_pages:
            if page not in links.get(linking, set()):
                problems.add(linking, f"does not link docs/guide/{page.name}")
    return len(all_pages)


def readme_block(readme):
    """The commands of the README's ``` block after the run mark, without their comments."""
    lines = pathlib.Path(readme).read_text().splitlines()
    for index, line in enumerate(lines):
        if RUN_MARK.search(line):
            start = next(i for i in range(index + 1, len(lines)) if lines[i].startswith("```"))
            end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("```"))
            return [line.partition(" #")[0].strip() for line in lines[start + 1:end] if line.strip()]
    return []


def run_readme(args, problems):
    if not args.mpirun or not args.mpicc:
        print("SKIP the README's commands need mpirun and mpicc")
        return SKIP
    commands = readme_block(pathlib.Path(args.source_root) / "README.md")
    if not commands:
        problems.add("README.md", "has no ``` block after <!-- check-guide: run ... -->")
        return 1
    scratch = pathlib.Path(tempfile.mkdtemp(prefix="check-guide."))
    bin_dir = scratch / "bin"
    bin_dir.mkdir()
    def wrapper(name, command):
        # A script, not a link: MPICH's mpiexec finds its proxy beside the path it was started by.
        path = bin_dir / name
        path.write_text("#!/bin/sh\nexec " + shlex.join(command) + ' "$@"\n')
        path.chmod(0o755)

    for name, target in (("h-trace", args.h_trace), ("h-dump", args.h_dump), ("h-merge", args.h_merge),
                         ("h-extrap", args.h_extrap), ("h-replay", args.h_replay), ("mpirun", args.mpirun),
                         ("mpicc", args.mpicc)):
        wrapper(name, [os.path.abspath(target)])
    studies = pathlib.Path(args.source_root).resolve() / "src" / "studies"
    for tool, script in man.STUDIES.items():
        wrapper(tool, [sys.executable, str(studies / script)])
    work = scratch / "work"
    work.mkdir()
    (work / "tests").symlink_to(pathlib.Path(args.source_root).resolve() / "tests")
    # Open MPI refuses root unless told, and the machine may have fewer cores than the README's ranks.
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ.get('PATH', '')}", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("HTRACE_FILE", None)
    env.pop("MERGE_PRECISION", None)
    output = ""
    for command in commands:
        print(f"$ {command}", flush=True)
        try:
            done = subprocess.run(["sh", "-c", command], cwd=work, env=env, capture_output=True, text=True,
                                  errors="replace", timeout=120)
        except subprocess.TimeoutExpired:
            problems.add("README.md", f"{command}: did not end within 120 s (scratch directory {scratch})")
            return 1
        print(done.stdout[-2000:] + done.stderr[-2000:], flush=True)
        output += done.stdout + done.stderr
        if done.returncode != 0:
            problems.add("README.md", f"{command}: exit status {done.returncode} (scratch directory {scratch})")
            return 1
    for name in ("trace.h", "report.html"):
        if any(name in command for command in commands) and not (work / name).is_file():
            problems.add("README.md", f"the commands wrote no {name} (scratch directory {scratch})")
    if any(" h-replay " in f" {command} " for command in commands) and \
            not re.search(r"^h-replay: replay [0-9.eE+-]+ s, traced ", output, re.MULTILINE):
        problems.add("README.md", f"h-replay printed no report line (scratch directory {scratch})")
    if not problems.found:
        subprocess.run(["rm", "-rf", str(scratch)])
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-root", required=True)
    for tool in ("h-trace", "h-dump", "h-merge", "h-extrap", "h-replay"):
        parser.add_argument(f"--{tool}", required=True)
    parser.add_argument("--mpirun")
    parser.add_argument("--mpicc")
    parser.add_argument("--run-readme", action="store_true")
    args = parser.parse_args(argv)

    problems = Problems()
    if args.run_readme:
        status = run_readme(args, problems)
        what = "the README's commands"
    else:
        status = 0
        what = f"{check_pages(args, problems)} pages"
    if problems.found:
        print("\n".join(problems.found), file=sys.stderr)
        print(f"check_guide: {len(problems.found)} problems", file=sys.stderr)
        return 1
    if status == SKIP:
        return SKIP
    print(f"check_guide: {what}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
