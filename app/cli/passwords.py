"""Where `folio add` gets an encrypted PDF's password, without putting it on the command line.

A password typed as an argument is readable by every user of the computer (`ps`, /proc) and stays in
the shell's history. So, in order: `--password-file FILE` (its first line; `-` reads standard input),
the FOLIO_PDF_PASSWORD environment variable, or a prompt on the terminal (not echoed): up front for
`--password` given with no value, else when a file turns out to need one and standard input is a
terminal. `--password VALUE` still works, with a warning.
"""

from __future__ import annotations

import getpass
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from app.errors import FolioError

PASSWORD_ENV = "FOLIO_PDF_PASSWORD"
ASK = "\0ask"  # `--password` given with no value: ask on the terminal
TRIES = 3  # prompts per file before giving up on it, as sudo does
VISIBLE_WARNING = (
    "folio: warning: a password on the command line can be read by other users of this computer and stays "
    f"in your shell history; use --password with no value (Folio asks), {PASSWORD_ENV} or --password-file"
)
HOW = f"--password (Folio asks), {PASSWORD_ENV} or --password-file FILE"


@dataclass
class Passwords:
    given: str | None  # from a file, the environment or the command line
    can_ask: bool  # a terminal to prompt on when a file needs a password

    def ask(self, name: str) -> str | None:
        """Prompt for a file's password (None: the user gave none)."""
        try:
            typed = getpass.getpass(f"Password for {name}: ")
        except EOFError:
            return None
        return typed or None

    def refused(self, message: str) -> str:
        """The one line for a file whose password was missing or wrong, saying how to give one."""
        return message if self.can_ask else f"{message}; give it with {HOW}"


def password_source(password: str | None, password_file: str | None) -> Passwords:
    """The password `folio add` starts with, and whether it may ask. Raises FolioError for a password
    file it cannot read, or for `--password` with no value and no terminal to ask on."""
    terminal = sys.stdin.isatty()
    if password_file is not None:
        if password is not None:
            raise FolioError("give the password one way: --password or --password-file, not both")
        return Passwords(_read_file(password_file), can_ask=terminal and password_file != "-")
    if password == ASK:
        if not terminal:
            raise FolioError(
                f"--password with no value asks on a terminal; in a script use {PASSWORD_ENV} or --password-file"
            )
        return Passwords(Passwords(None, True).ask("encrypted PDFs"), can_ask=True)
    if password is not None:
        print(VISIBLE_WARNING, file=sys.stderr)
        return Passwords(password, can_ask=terminal)
    return Passwords(os.environ.get(PASSWORD_ENV) or None, can_ask=terminal)


def _read_file(name: str) -> str:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise FolioError(f"{name}: cannot read the password file ({exc.strerror or exc})") from exc
    except UnicodeDecodeError:
        raise FolioError(f"{name}: the password file is not UTF-8 text") from None
    lines = text.splitlines()
    if not lines or not lines[0]:
        raise FolioError(f"{name}: the password file is empty (the password is its first line)")
    return lines[0]
