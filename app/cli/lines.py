"""stdout and stderr on one screen: an answer streams to stdout while progress goes to stderr, and
neither may continue a line the other left open ("...governed by Indiana laws.... checking").

When both streams end up in the same place (a terminal, or one file with `2>&1`), writing to one
first ends the other's open line; when they go to different places nothing is added to either, so a
redirected answer keeps its text exactly. Either way each stream ends its own last line (`close`).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from app.engine.progress import Progress


@dataclass
class Lines:
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    _open: dict[str, bool] = field(default_factory=lambda: {"out": False, "err": False})

    def write(self, text: str) -> None:
        """Text of the answer on stdout, as it streams (its lines may stay open)."""
        self._put("out", text)

    def note(self, text: str) -> None:
        """A whole line on stderr (a status, a warning), below any line a status left open."""
        self.end_line("err")
        self._put("err", text + "\n")

    def status(self, text: str) -> None:
        """A line on stderr that the next status rewrites in place (a terminal only: \\r)."""
        self._put("err", f"\r{text}")

    def end_line(self, stream: str = "out") -> None:
        """End `stream`'s open line, if it has one ('out' or 'err')."""
        if self._open[stream]:
            self._put(stream, "\n")

    def close(self) -> None:
        self.end_line("err")
        self.end_line("out")

    def _put(self, stream: str, text: str) -> None:
        other = "err" if stream == "out" else "out"
        if self._open[other] and self._shared():
            self._raw(other, "\n")
        self._raw(stream, text)

    def _raw(self, stream: str, text: str) -> None:
        if not text:
            return
        handle = self.out if stream == "out" else self.err
        handle.write(text)
        handle.flush()
        self._open[stream] = not text.endswith("\n")

    def _shared(self) -> bool:
        """Do both streams land in the same place (the same terminal, or the same file)?"""
        try:
            a, b = os.fstat(self.out.fileno()), os.fstat(self.err.fileno())
        except (OSError, ValueError, AttributeError):  # io.StringIO in a test, a closed stream
            return bool(_isatty(self.out) and _isatty(self.err))
        return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


class ProgressLines:
    """The engine's progress for `folio ask` and `folio compare --summary`: a status line per step, and
    on a terminal one line of reading progress rewritten in place."""

    def __init__(self, lines: Lines) -> None:
        self.lines = lines
        self.tty = _isatty(lines.err)

    def __call__(self, progress: Progress) -> None:
        if not progress.reading:
            self.lines.note(f"... {progress.text}")
        elif self.tty:
            self.lines.status(f"... reading {progress.done:,}/{progress.total:,} tokens, ETA {progress.eta_s:.0f} s ")
            if progress.done >= progress.total:
                self.lines.end_line("err")
