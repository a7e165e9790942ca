"""README.md and docs/ARCHITECTURE.md speak to people who clone the repository: they name no path
outside it, and every file or folder of the repository they name exists."""

from __future__ import annotations

import re

import pytest

from tests.conftest import REPO

DOCS = ["README.md", "docs/ARCHITECTURE.md"]
TOP = ("app/", "ui/", "ingest/", "inference/", "assets/", "tests/", "tools/", "benchmarks/", "docs/", "packaging/")


def _named_paths(text: str) -> list[str]:
    """Repository paths in `code` spans and Markdown links (images included)."""
    spans = re.findall(r"`([^`\s]+)`", text) + re.findall(r"\]\(([^)\s]+)\)", text)
    return [s.rstrip(".,:;") for s in spans if s.startswith(TOP)]


@pytest.mark.parametrize("doc", DOCS)
def test_names_no_path_outside_the_repository(doc: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    assert "../" not in text
    assert not re.search(r"\]\((/|[a-zA-Z]:\\)", text)  # no absolute link targets


@pytest.mark.parametrize("doc", DOCS)
def test_every_repository_path_it_names_exists(doc: str) -> None:
    named = _named_paths((REPO / doc).read_text(encoding="utf-8"))
    assert len(named) > 10
    missing = [p for p in named if not any(REPO.glob(p.rstrip("/")))]
    assert missing == []


def test_readme_links_the_architecture() -> None:
    assert "](docs/ARCHITECTURE.md)" in (REPO / "README.md").read_text(encoding="utf-8")
