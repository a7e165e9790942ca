"""The one exception family the CLI and the window show to users, as one plain line."""

from __future__ import annotations

import errno
import sqlite3
from pathlib import Path

from inference.errors import EngineError
from ingest.errors import IngestError


class FolioError(Exception):
    """An error with a message meant for the user. str(error) is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class NotFound(FolioError):
    pass


class NewerDatabase(FolioError):
    pass


class DoesNotFit(FolioError):
    """The selection does not fit the model's context (the planner's line): a caller may offer to read
    it another way (in passes, by the pages a search finds, by chosen pages)."""


class LibraryGone(FolioError):
    """The data folder was removed while Folio ran: nothing more can be saved, whatever the item."""


class Cancelled(Exception):
    """The user stopped the work. Not an error: nothing is reported as failed."""


# ingest and inference sit below app and cannot import FolioError, so callers catch all three.
USER_ERRORS: tuple[type[Exception], ...] = (FolioError, IngestError, EngineError)


# Faults of the machine rather than of the input: a full or read-only disk, a folder taken away, a
# library another process keeps locked. Caught where a command or a window action ends, and said in
# plain words by one_line (below), the one place that words them.
FAULTS: tuple[type[Exception], ...] = (OSError, sqlite3.Error)

_AGAIN = "then run the command again"
_FULL = f"the disk holding the library is full: free some space, {_AGAIN} (nothing of this command was saved)"


def fault_line(error: BaseException) -> str | None:
    """What a user should read for a fault of the disk or the database (None: not such a fault)."""
    if isinstance(error, sqlite3.Error):
        return _sqlite_line(error)
    if not isinstance(error, OSError):
        return None
    where = f" ({error.filename})" if error.filename else ""
    code = error.errno
    if code == errno.ENOSPC:
        return f"the disk is full{where}: free some space, {_AGAIN}"
    if code == getattr(errno, "EDQUOT", -1):
        return f"your disk quota is used up{where}: free some space, {_AGAIN}"
    if code == errno.EROFS:
        return f"the disk is read-only{where}: Folio cannot save there; make it writable or set another data folder"
    if code in (errno.EACCES, errno.EPERM):
        return f"Folio is not allowed to write or read{where or ' a file it needs'}: check the folder's permissions"
    if code == errno.ENOENT and error.filename:
        return f"{error.filename} is gone (was a folder removed while Folio was running?)"
    if code == errno.EIO:
        return f"the disk reported a read or write error{where}: check the disk, {_AGAIN}"
    return None


def _sqlite_line(error: sqlite3.Error) -> str:
    text = str(error).lower()
    code = getattr(error, "sqlite_errorcode", None)
    if "disk is full" in text or code == 13:  # SQLITE_FULL
        return _FULL
    if "locked" in text or "busy" in text:
        return (
            "the library is busy: another Folio window or command has held it for longer than the wait "
            "allows; try again when that one has finished"
        )
    if "readonly" in text or "read-only" in text:
        return "the library is read-only (its folder or disk cannot be written): make it writable, " + _AGAIN
    if "unable to open" in text:
        return "the library file cannot be opened: its folder is missing or cannot be written"
    if "disk i/o" in text:
        gone = _library_gone()
        if gone:
            return gone
        if _library_disk_full():  # SQLite says only "disk I/O error" when it cannot grow its -shm file
            return _FULL
        return f"the disk reported an error while Folio used the library: check the disk, {_AGAIN}"
    if "malformed" in text or "not a database" in text:
        return "the library file is damaged (the database cannot be read)"
    return f"the library could not be read or written ({' '.join(str(error).split())})"


# The library file this process opened (app.context.open_app sets it): SQLite's "disk I/O error" is
# told apart by looking at its folder. One library per process, so one module-level value.
library_file: Path | None = None


def _library_gone() -> str | None:
    """SQLite says "disk I/O error" too when its files were deleted under it."""
    db_file = library_file
    if db_file is None or db_file.exists():
        return None
    return (
        f"the library at {db_file.parent} was removed while Folio was running: what this command did went with "
        "it; restore the folder from a backup, or start again with an empty library"
    )


def _library_disk_full() -> bool:
    import shutil

    if library_file is None:
        return False
    try:
        return shutil.disk_usage(library_file.parent).free < 1 << 16
    except OSError:
        return False


def one_line(error: BaseException) -> str:
    faulted = fault_line(error)
    if faulted is not None:
        return faulted
    if isinstance(error, OSError) and error.strerror:
        return f"{error.filename}: {error.strerror}" if error.filename else error.strerror
    text = str(error).strip() or type(error).__name__
    return " ".join(text.split())
