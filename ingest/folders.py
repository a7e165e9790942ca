"""The files a list of paths names: each file as given, each folder's files found in it recursively.

The window's *Add folder…* and `folio add FOLDER` both go through `files_in`, so the two add the same
files in the same order. Hidden entries (a name starting with '.') and the files operating systems
leave in folders (Thumbs.db, desktop.ini) are skipped: a folder copied from a Mac or a Windows share
would otherwise end each add with errors about files the user never chose. Links to folders are not
followed (a link back up the tree would never end); links to files are added like files.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

OS_LITTER = frozenset({"thumbs.db", "desktop.ini", "icon\r"})


def skipped(name: str) -> bool:
    """A hidden entry, or a file the operating system left in the folder."""
    return name.startswith(".") or name.lower() in OS_LITTER


def files_in(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Each path that is not a folder as given (a missing one too: adding it says why it fails), and the
    files under each folder, sorted by their path within it."""
    out: list[str] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            out.append(str(given))
            continue
        found = []
        for folder, dirs, files in os.walk(path):  # followlinks=False: a link to a folder is not entered
            dirs[:] = [d for d in dirs if not skipped(d)]
            found += [Path(folder, f) for f in files if not skipped(f)]
        out += [str(f) for f in sorted(found, key=lambda f: f.relative_to(path).parts)]
    return out
