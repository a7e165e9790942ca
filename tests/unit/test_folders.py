"""ingest.folders.files_in: what *Add folder…* and `folio add FOLDER` add, on real folders."""

from __future__ import annotations

import os
from pathlib import Path

from ingest.folders import files_in


def test_a_folder_gives_its_files_recursively_sorted_without_hidden_or_litter(tmp_path: Path) -> None:
    root = tmp_path / "Matter 2026-114"
    (root / "b correspondence").mkdir(parents=True)
    (root / "a pleadings" / "exhibits").mkdir(parents=True)
    (root / ".git").mkdir()
    for name in [
        "z lease.pdf",
        "a pleadings/claim.pdf",
        "a pleadings/exhibits/ex 1.pdf",
        "b correspondence/letter.eml",
        ".DS_Store",
        "Thumbs.db",
        "b correspondence/desktop.ini",
        ".git/config",
        "b correspondence/.~lock.letter.docx#",
    ]:
        (root / name).write_bytes(b"x")
    got = [Path(f).relative_to(root).as_posix() for f in files_in([root])]
    assert got == [
        "a pleadings/claim.pdf",
        "a pleadings/exhibits/ex 1.pdf",
        "b correspondence/letter.eml",
        "z lease.pdf",
    ]


def test_files_and_missing_paths_are_kept_as_given_in_order(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    (folder / "in.pdf").write_bytes(b"x")
    single = tmp_path / "single.pdf"
    single.write_bytes(b"x")
    missing = tmp_path / "missing.pdf"
    assert files_in([str(single), folder, str(missing)]) == [str(single), str(folder / "in.pdf"), str(missing)]


def test_a_link_to_a_folder_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "a.pdf").write_bytes(b"x")
    os.symlink(root, root / "sub" / "loop")  # a link back up the tree: following it would never end
    assert [Path(f).name for f in files_in([root])] == ["a.pdf"]
