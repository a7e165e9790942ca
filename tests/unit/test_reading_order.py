"""The order a new selection's documents are put in: those whose state the engine kept come first (the
longest state on disk that holds some of them, in its order), then the rest in the order they were
added. Real library (SQLite), real state store files; the engine's side is tests/e2e/test_multidoc.py."""

from __future__ import annotations

from pathlib import Path

from app.caches import Readings
from app.context import AppContext
from app.engine.documents import reading_order
from inference.state_cache import StateStore

MODEL = "a" * 64
OTHER_MODEL = "b" * 64


def _add(ctx: AppContext, tmp_path: Path, name: str) -> tuple[int, str]:
    path = tmp_path / f"{name}.txt"
    path.write_text(f"{name} AGREEMENT\n\n1. The {name} party shall deliver the goods.\n", encoding="utf-8")
    doc = ctx.library.add(path).document
    return doc.id, doc.sha256


def _keep_state(ctx: AppContext, key: str, tokens: int) -> None:
    """A committed state file, as the engine leaves one."""

    def write(tmp: Path) -> int:
        tmp.write_bytes(b"\0" * tokens)
        return tokens

    assert StateStore(ctx.paths.state_cache_dir, 1 << 30).save(key, tokens, write) is not None


def test_documents_read_before_come_first_then_the_order_added(ctx: AppContext, tmp_path: Path) -> None:
    (a, sha_a), (b, sha_b), (c, sha_c) = (_add(ctx, tmp_path, n) for n in ("alpha", "beta", "gamma"))
    readings = Readings(ctx.paths)
    assert reading_order(ctx, MODEL, [c, a, b]) == [a, b, c]  # nothing read: the order added

    _keep_state(ctx, "k-b", 100)
    readings.note_documents(MODEL, [sha_b], key="k-b", tokens=100)
    assert reading_order(ctx, MODEL, [c, a, b]) == [b, a, c]
    assert readings.state(MODEL, sha_b).kind == "ready"  # the state of B alone makes B ready

    _keep_state(ctx, "k-ca", 300)
    readings.note_documents(MODEL, [sha_c, sha_a], key="k-ca", tokens=300)
    assert reading_order(ctx, MODEL, [a, b, c]) == [c, a, b]  # the longest state wins, in its order
    assert reading_order(ctx, MODEL, [a, b]) == [b, a]  # {C, A} is not all selected: B's state serves
    assert reading_order(ctx, OTHER_MODEL, [a, b, c]) == [a, b, c]  # read with another model: no use

    StateStore(ctx.paths.state_cache_dir, 0).discard("k-ca")  # evicted, or the cache was cleared
    assert reading_order(ctx, MODEL, [a, b, c]) == [b, a, c]


def test_a_partly_read_document_comes_first(ctx: AppContext, tmp_path: Path) -> None:
    (a, _), (b, sha_b) = (_add(ctx, tmp_path, n) for n in ("alpha", "beta"))
    _keep_state(ctx, "ck-b", 64)
    Readings(ctx.paths).note(MODEL, sha_b, checkpoint="ck-b", kept=64)
    assert reading_order(ctx, MODEL, [a, b]) == [b, a]


def test_forgetting_a_document_removes_the_records_that_name_it(ctx: AppContext, tmp_path: Path) -> None:
    (_, sha_a), (_, sha_b) = (_add(ctx, tmp_path, n) for n in ("alpha", "beta"))
    readings = Readings(ctx.paths)
    _keep_state(ctx, "k-ab", 200)
    readings.note_documents(MODEL, [sha_a, sha_b], key="k-ab", tokens=200)
    assert readings.read_first(MODEL, [sha_b, sha_a]) == [sha_a, sha_b]
    readings.forget_document(sha_b)
    assert readings.read_first(MODEL, [sha_b, sha_a]) == []
    assert not any(sha_b in p.read_text() for p in readings.folder.glob("*.json"))
