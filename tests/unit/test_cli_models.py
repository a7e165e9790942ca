"""Model numbers: given when a model is registered (the starter's reserved with the library), never
by listing, so `folio models use 2` means the same model whether or not `models list` ran first;
`models use` takes the number, the name or 'starter'."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from pathlib import Path

from tests.conftest import run_folio


def _rows(home: Path) -> list[tuple[int, int]]:
    db = sqlite3.connect(home / "data" / "folio.sqlite3")
    try:
        return [(r[0], r[1]) for r in db.execute("SELECT id, is_starter FROM models ORDER BY id")]
    finally:
        db.close()


def test_models_use_2_works_on_a_new_library_without_listing_first(folio_home: Path, tiny_qwen35: Path) -> None:
    code, out, err = run_folio("models", "add", str(tiny_qwen35), "--no-activate")
    assert code == 0, err
    assert out.startswith("registered: #2 tiny-qwen35")  # 1 is the starter's, reserved with the library
    code, out, err = run_folio("models", "use", "2")  # the case: before any `models list`
    assert code == 0, err
    assert out.strip() == "active model: #2 tiny-qwen35 (ALL_F32)"

    code, out, err = run_folio("models", "list")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split()[:3] == ["1", "starter", "-"] and "set up when first used" in lines[0]
    assert lines[1].startswith("*   2  tiny-qwen35")
    assert _rows(folio_home) == [(2, 0)]  # listing registered nothing
    listed = json.loads(run_folio("models", "list", "--json")[1])
    assert [(m["id"], m["set_up"], m["active"]) for m in listed] == [(1, False, False), (2, True, True)]


def test_models_use_takes_the_number_the_name_or_starter(folio_home: Path, tiny_qwen35: Path, tmp_path: Path) -> None:
    from tests.fixtures.tiny_qwen35 import TINY, write_qwen35_gguf

    other = write_qwen35_gguf(tmp_path / "tiny-mtp.gguf", dataclasses.replace(TINY, mtp_layers=1))
    for path in (tiny_qwen35, other):
        assert run_folio("models", "add", str(path))[0] == 0
    for ref, expected in (
        ("tiny-mtp", "#3 "),  # its file name (both files call themselves tiny-qwen35 inside)
        ("TINY-QWEN35.GGUF", "#2 "),  # the file name, case ignored
        ("1", "#1 the starter demo model"),
        ("starter", "#1 the starter demo model"),
        ("3", "#3 "),
    ):
        code, out, err = run_folio("models", "use", ref)
        assert code == 0 and out.startswith(f"active model: {expected}"), (ref, out, err)
    code, _, err = run_folio("models", "use", "tiny-qwen35 (ALL_F32)")  # the name both are listed by
    assert code == 1 and err.strip() == "folio: error: 'tiny-qwen35 (ALL_F32)' names 2 models (#2, #3); use the number"
    code, _, err = run_folio("models", "use", "gemma")
    assert code == 1 and err.strip() == "folio: error: no registered model 'gemma' (see folio models list)"
    code, _, err = run_folio("models", "use", "9")
    assert code == 1 and "no registered model '9'" in err
    assert _rows(folio_home) == [(2, 0), (3, 0)]  # choosing the starter did not set it up either


def test_the_starter_takes_its_reserved_number_when_it_is_set_up(starter_home: Path, tiny_qwen35: Path) -> None:
    from app.context import open_app

    ctx = open_app()
    try:
        _starter_takes_its_number(ctx, tiny_qwen35)
    finally:
        ctx.close()


def _starter_takes_its_number(ctx, tiny_qwen35: Path) -> None:  # type: ignore[no-untyped-def]
    assert ctx.models.starter_number() == 1
    first, _ = ctx.models.add(tiny_qwen35)
    assert first.id == 2
    starter = ctx.models.starter()  # first use of the demo model registers it
    assert starter.id == 1 and starter.is_starter
    assert ctx.models.lookup("1") is None and ctx.models.get("1").id == 1
    again, created = ctx.models.add(tiny_qwen35)
    assert (again.id, created) == (2, False)  # a file registered again keeps its number


def test_an_older_library_keeps_its_numbers_and_reserves_the_next_for_the_starter(tmp_path: Path) -> None:
    from sqlite_utils import Database

    from app.models.registry import ModelRegistry
    from app.store.db import build_migrations, open_db

    def library(rows: list[tuple[int, str, int]]) -> ModelRegistry:
        path = tmp_path / f"old-{len(rows)}.sqlite3"
        old = Database(path)
        build_migrations().apply(old, stop_before="m036_model_numbers")  # type: ignore[attr-defined]
        for model_id, sha, starter in rows:
            old.execute(
                "INSERT INTO models (id, sha256, name, path, architecture, context_length, quantization, "
                "size_bytes, is_starter, added_at) VALUES (?, ?, 'm', '/m.gguf', 'qwen35', 1, 'q', 1, ?, 'x')",
                [model_id, sha, starter],
            )
        old.conn.commit()
        old.close()
        return ModelRegistry(open_db(path), tmp_path / "models")

    assert library([(1, "a" * 64, 0), (2, "b" * 64, 1)]).starter_number() == 2  # the starter's own id
    registry = library([(1, "a" * 64, 0)])  # the starter never used: the next number waits for it
    assert registry.starter_number() == 2 and registry._next_number(starter=False) == 3
    assert registry._next_number(starter=True) == 2
