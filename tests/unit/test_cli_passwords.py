"""An encrypted PDF's password never has to be on the command line: `folio add` asks on the terminal
(not echoed), or reads FOLIO_PDF_PASSWORD or --password-file; `--password VALUE` still works but warns.
In every documented flow the running command's argv (what `ps` shows every user) holds no password."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, run_folio
from tests.fixtures.pdfs import make_encrypted_pdf

SECRET = "s3cret-Tr0mb0ne"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal and /proc")


@pytest.fixture
def locked(tmp_path: Path) -> Path:
    return make_encrypted_pdf(tmp_path / "locked.pdf", password=SECRET)


class Terminal:
    """`folio` run on a pseudo-terminal, as in a shell: what it prints, and what we type."""

    def __init__(self, *args: str) -> None:
        import pty

        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: the real command, nothing else
            os.chdir(REPO)
            os.execv(sys.executable, [sys.executable, "-m", "app.cli", *args])
        self.seen = b""

    def _read(self, deadline: float) -> bool:
        """Read what is there; False once the command has ended (the terminal closes)."""
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out; the terminal shows: {self.seen.decode(errors='replace')}")
        ready, _, _ = select.select([self.fd], [], [], 0.5)
        if ready:
            try:
                self.seen += os.read(self.fd, 4096)
            except OSError:
                return False
        return True

    def expect(self, text: str, count: int = 1, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while self.seen.count(text.encode()) < count:
            if not self._read(deadline):
                raise AssertionError(f"never saw {text!r}: {self.seen.decode(errors='replace')}")

    def type(self, line: str) -> None:
        os.write(self.fd, line.encode() + b"\n")

    def argv(self) -> list[str]:
        return Path(f"/proc/{self.pid}/cmdline").read_bytes().decode().split("\0")

    def finish(self) -> tuple[int, str]:
        deadline = time.monotonic() + 120
        while self._read(deadline):
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status), self.seen.decode(errors="replace")


@posix_only
def test_asked_on_the_terminal_when_the_file_needs_it_again_when_wrong(locked: Path) -> None:
    term = Terminal("add", str(locked))
    term.expect("Password for locked.pdf: ")
    assert SECRET not in " ".join(term.argv()) and term.argv()[-2:] == [str(locked), ""]
    term.type("wrong guess")
    term.expect("Password for locked.pdf: ", count=2)
    assert "the password is wrong" in term.seen.decode()
    term.type(SECRET)
    code, seen = term.finish()
    assert code == 0 and "added: #1 locked" in seen
    assert SECRET not in seen and "wrong guess" not in seen  # not echoed


@posix_only
def test_password_with_no_value_asks_once_for_every_file(locked: Path, tmp_path: Path) -> None:
    second = make_encrypted_pdf(tmp_path / "also locked.pdf", password=SECRET)
    term = Terminal("add", str(locked), str(second), "--password")
    term.expect("Password for encrypted PDFs: ")
    assert SECRET not in " ".join(term.argv())
    term.type(SECRET)
    code, seen = term.finish()
    assert code == 0 and "added: #1 locked" in seen and "added: #2 also locked" in seen
    assert seen.count("Password for") == 1


@posix_only
def test_the_flag_before_the_file_still_means_ask(locked: Path) -> None:
    term = Terminal("add", "--password", str(locked))  # `--password FILE`: the file is not the password
    term.expect("Password for encrypted PDFs: ")
    term.type(SECRET)
    code, seen = term.finish()
    assert code == 0 and "added: #1 locked" in seen


def test_from_the_environment(locked: Path) -> None:
    args = ("add", str(locked))
    code, out, err = run_folio(*args, env={"FOLIO_PDF_PASSWORD": SECRET})
    assert code == 0 and out.startswith("added: #1 locked"), err
    assert SECRET not in " ".join(args) and err == ""


def test_from_a_file_or_standard_input(locked: Path, tmp_path: Path) -> None:
    secret_file = tmp_path / "pdf-password.txt"
    secret_file.write_text(SECRET + "\n")
    args = ("add", str(locked), "--password-file", str(secret_file))
    code, out, err = run_folio(*args)
    assert code == 0 and out.startswith("added: #1 locked"), err
    assert SECRET not in " ".join(args)

    other = make_encrypted_pdf(tmp_path / "other.pdf", password=SECRET + "2")
    piped = subprocess.run(
        [sys.executable, "-m", "app.cli", "add", str(other), "--password-file", "-"],
        input=SECRET + "2\n",
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert piped.returncode == 0 and piped.stdout.startswith("added: #2 other"), piped.stderr


def test_a_password_on_the_command_line_works_but_warns(locked: Path) -> None:
    code, out, err = run_folio("add", str(locked), "--password", SECRET)
    assert code == 0 and out.startswith("added: #1 locked")
    assert err.startswith("folio: warning: a password on the command line can be read by other users")
    assert "FOLIO_PDF_PASSWORD" in err and "--password-file" in err


def test_without_a_terminal_or_a_password_one_line_says_how(locked: Path, tmp_path: Path) -> None:
    code, out, err = run_folio("add", str(locked))  # stdin is not a terminal here
    assert code == 1 and out == ""
    assert err.strip() == (
        "folio: error: locked.pdf: password required; "
        "give it with --password (Folio asks), FOLIO_PDF_PASSWORD or --password-file FILE"
    )
    code, _, err = run_folio("add", str(locked), env={"FOLIO_PDF_PASSWORD": "nope"})
    assert code == 1 and "locked.pdf: the password is wrong; give it with" in err
    code, _, err = run_folio("add", str(locked), "--password")
    assert code == 1 and "--password with no value asks on a terminal" in err
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    code, _, err = run_folio("add", str(locked), "--password-file", str(empty))
    assert code == 1 and err.strip().endswith("the password file is empty (the password is its first line)")
    assert run_folio("list")[1].startswith("The library is empty")
