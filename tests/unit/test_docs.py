"""README.md and the pages of docs/ speak to people who clone the repository: they name no path
outside it, every file or folder of the repository they name exists, and their links lead somewhere.
The README stays a newcomer's page: short, with a quick start and the known limitations."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PAGES = [
    "docs/features.md",
    "docs/window.md",
    "docs/models.md",
    "docs/cli.md",
    "docs/extraction.md",
    "docs/security.md",
    "docs/contributing.md",
    "docs/faults.md",
    "docs/accessibility.md",
    "docs/command-line.md",
    "docs/checks.md",
    "docs/redaction.md",
]
DOCS = ["README.md", "docs/ARCHITECTURE.md", *PAGES]
TOP = ("app/", "ui/", "ingest/", "inference/", "assets/", "tests/", "tools/", "benchmarks/", "docs/", "packaging/")
README_MAX_LINES = 150


def _named_paths(text: str) -> list[str]:
    """Repository paths in `code` spans and Markdown links (images included)."""
    spans = re.findall(r"`([^`\s]+)`", text) + re.findall(r"\]\(([^)\s]+)\)", text)
    return [s.partition("#")[0].rstrip(".,:;") for s in spans if s.startswith(TOP)]


@pytest.mark.parametrize("doc", DOCS)
def test_names_no_path_outside_the_repository(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    assert "../" not in text
    assert not re.search(r"\]\((/|[a-zA-Z]:\\)", text)  # no absolute link targets


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_it_names_exists(doc: str) -> None:
    named = _named_paths((REPO / doc).read_text(encoding="utf-8"))
    if doc in ("README.md", "docs/ARCHITECTURE.md"):
        assert len(named) > 10  # the pattern still finds them
    missing = [p for p in named if not any(REPO.glob(p.rstrip("/")))]
    assert missing == []


def _without_code_blocks(text: str) -> str:
    """The page without its fenced code blocks: a '## 15' line in an example is not a heading."""
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def _anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} +(.+?) *$", _without_code_blocks(page.read_text(encoding="utf-8")), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("doc", DOCS)
def test_every_link_leads_to_a_file_and_heading_that_exist(doc: str) -> None:
    """Relative links (pages, screenshots, '#section' anchors) resolve from the page's own folder."""
    page = REPO / doc
    links = re.findall(r"\]\(([^)\s]+)\)", _without_code_blocks(page.read_text(encoding="utf-8")))
    broken = []
    for link in links:
        if re.match(r"[a-z]+:", link):  # https://, mailto: the world outside is not checked here
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        if not path.exists() or (anchor and path.suffix == ".md" and anchor not in _anchors(path)):
            broken.append(link)
    assert broken == []


def test_readme_links_the_architecture() -> None:
    assert "](docs/ARCHITECTURE.md)" in (REPO / "README.md").read_text(encoding="utf-8")


def test_readme_is_short_with_a_quick_start_and_known_limitations() -> None:
    """A newcomer's page: what Folio is, install, a quick start, what it cannot do yet, and links into
    docs/ (the rest lives there, each page linked from the README)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < README_MAX_LINES
    sections = re.findall(r"^## +(.+)$", _without_code_blocks(text), re.MULTILINE)
    assert any(s.startswith("Quick start") for s in sections), sections
    assert any(s.startswith("Known limitations") for s in sections), sections
    assert "make run" in text and "make test" in text
    assert [p for p in PAGES if f"]({p})" not in text and f"]({p}#" not in text] == []


def _tracked_text_files() -> list[str]:
    import shutil
    import subprocess

    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout (a bundle or an unpacked archive): nothing is tracked")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    names = [n for n in out.decode("utf-8", "replace").split("\0") if n]
    return [n for n in names if (REPO / n).is_file() and b"\0" not in (REPO / n).read_bytes()[:8192]]


def test_no_merge_conflict_markers_in_any_tracked_text() -> None:
    """A merge left half-done shows as lines opening with <<<<<<< or >>>>>>> (and =======) in a file:
    in docs they mislead a reader, in code they break it."""
    marked = []
    for name in _tracked_text_files():
        text = (REPO / name).read_text(encoding="utf-8", errors="replace")
        if re.search(r"^(<{7}|>{7})( |$)", text, re.MULTILINE):
            marked.append(name)
    assert marked == []


def test_architecture_lists_the_rooms_in_import_order() -> None:
    """The rooms table of docs/ARCHITECTURE.md lists app's rooms top to bottom in the order of the
    import-linter contract in pyproject.toml (a room imports only rooms below it)."""
    import tomllib

    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c["layers"] for c in contracts if c.get("type") == "layers" and "app.cli" in str(c["layers"]))
    order = [name.strip() for layer in layers for name in layer.split("|")]
    table = (REPO / "docs/ARCHITECTURE.md").read_text(encoding="utf-8").split("| room | what it holds |", 1)[1]
    rows = re.findall(r"^\| `(app/[^`]+?)/?`", table.split("\n\n", 1)[0], re.MULTILINE)
    listed = [r.removesuffix(".py").replace("/", ".") for r in rows]
    positions = [order.index(room) for room in listed if room in order]
    assert len(positions) >= 8 and positions == sorted(positions), listed
