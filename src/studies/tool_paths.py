"""Where a study finds the tools it runs (h-trace, h-replay, h-dump ...): the path given on its
command line, else next to the study as it was called (installed, the studies are links in bin/
beside the tools; `__file__` of a link is the link's path), else on PATH."""

import os
import pathlib
import shutil


def find_tool(name, given, study_file):
    """The path of tool `name`, or None when it is nowhere; `study_file` is the study's __file__. A
    path given with a directory becomes absolute: the study may run the tool from elsewhere."""
    if given:
        return os.path.abspath(given) if os.sep in given else given
    beside = pathlib.Path(os.path.abspath(study_file)).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    return shutil.which(name)
