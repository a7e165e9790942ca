"""The setup page's words and numbers without Qt: first run, tier advice, the plan for a model, caches."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.caches import cache_usage, clear_caches, human_size
from app.engine.setup import (
    FULL_CONTEXT,
    longest_context,
    machine_advice,
    mark_setup_seen,
    model_plan,
    needs_model_setup,
    starter_status,
    tier_line,
)
from inference.planner import QWEN35_TIERS, GiB, Hardware, PlanRequest, plan, tier_facts
from inference.state_cache import StateStore


def _machine(ram_gib: float, cores: int = 8) -> Hardware:
    ram = int(ram_gib * GiB)
    return Hardware(ram_total=ram, ram_available=ram // 2, physical_cores=cores)


def test_first_run_only_while_no_usable_model_is_active_and_once(ctx, tiny_qwen35: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import shutil

    from tests.fixtures.model_stores import write_meta_gguf

    assert needs_model_setup(ctx)
    ctx.settings.server_url = "http://gpu-box.lan:8000"  # answers come from a server: nothing to set up
    assert not needs_model_setup(ctx)
    ctx.settings.server_url = ""
    record, _ = ctx.models.add(tiny_qwen35)
    ctx.settings.active_model = record.sha256
    assert not needs_model_setup(ctx)
    # A model that is not Qwen3.5 (the eval model is a Qwen2.5), chosen on purpose, is usable too.
    llama = write_meta_gguf(tmp_path / "llama.gguf", architecture="llama", tier="2B")
    other, _ = ctx.models.add(llama)
    ctx.settings.active_model = other.sha256
    assert not needs_model_setup(ctx)
    moved = shutil.move(llama, tmp_path / "elsewhere.gguf")  # its drive unplugged: nothing usable
    assert not Path(other.path).exists() and Path(moved).exists()
    assert needs_model_setup(ctx)
    ctx.settings.active_model = ""
    mark_setup_seen(ctx.paths)
    assert not needs_model_setup(ctx)


@pytest.mark.parametrize(
    ("ram_gib", "recommended", "whole"),
    [
        (64, "Qwen3.5-9B", True),
        (10, "Qwen3.5-9B", False),  # 9B over ~190K tokens beats a smaller tier over the whole context
        (8, "Qwen3.5-4B", False),
        (6, "Qwen3.5-2B", True),
        (4, "Qwen3.5-0.8B", False),  # only a short context: still the best this machine can do
        (3.2, None, False),
    ],
)
def test_the_recommended_tier_follows_the_memory(ram_gib: float, recommended: str | None, whole: bool) -> None:
    advice = machine_advice(_machine(ram_gib))
    assert advice.recommended == recommended
    assert [t.tier for t in advice.tiers] == [t.name for t in QWEN35_TIERS]
    if recommended:
        chosen = next(t for t in advice.tiers if t.tier == recommended)
        assert chosen.fits == whole
        assert ("whole 262,144-token document" in advice.recommendation()) == whole
    else:
        assert "too little memory" in advice.recommendation()
    assert f"{ram_gib:.1f} GiB of memory" in advice.summary() or ram_gib == 3.2
    for t in advice.tiers:
        name, whole_text, longest = tier_line(t)
        assert name == t.tier and whole_text.startswith("yes" if t.fits else "no")
        assert longest == (f"{t.max_context:,} tokens" if t.max_context else "does not fit")


def test_longest_context_fits_the_planner_and_obeys_the_user(tmp_path: Path) -> None:
    facts = tier_facts(QWEN35_TIERS[-1])  # the 9B
    hw = _machine(10)
    longest = longest_context(facts, hw)
    assert 100_000 < longest < FULL_CONTEXT
    chosen = plan(facts, hw, PlanRequest(prompt_tokens=longest - 1024, headroom=False))
    assert chosen.fits and chosen.kv_type == "q4_0"
    assert longest_context(facts, hw, context_cap=32_768) == 32_768
    assert longest_context(facts, hw, kv_type="f16") < longest
    assert longest_context(facts, _machine(256)) == FULL_CONTEXT


def test_the_plan_for_the_active_model_in_plain_lines(qwen35_home: Path) -> None:
    from app.context import open_app
    from app.engine.session import Session

    ctx = open_app()
    service = Session.for_context(ctx)
    try:
        record = ctx.models.active(ctx.settings)
        result = model_plan(service, record)
        text = "\n".join(result.lines())
    finally:
        service.close()
        ctx.close()
    assert result.plan.fits and result.longest_context == result.facts.context_length  # tiny: the whole context
    assert "The planner chose: context" in text and f"KV cache {result.plan.kv_type}" in text
    assert "Predicted memory:" in text and "weights" in text
    assert "Vision file: none" in text and "not Qwen3.5" not in text
    assert "no MTP layers (drafts come from the documents only)" in text  # read from the file's header


def test_starter_status_offers_the_file_beside_the_installer(  # type: ignore[no-untyped-def]
    ctx, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import app.engine.setup as model_setup

    assert starter_status(ctx).installed  # a source checkout: the pip package carries it
    monkeypatch.setattr(model_setup, "packaged_starter_available", lambda: False)
    status = starter_status(ctx)
    assert not status.installed and status.found_file is None and status.file_name in status.line()
    beside = tmp_path / status.file_name
    beside.write_bytes(b"GGUF")
    monkeypatch.setenv("FOLIO_STARTER_GGUF", str(beside))
    status = starter_status(ctx)
    assert status.found_file == beside and str(beside) in status.line()


def test_clearing_caches_frees_snapshots_and_facts_but_not_a_save_in_progress(ctx, tiny_qwen35: Path) -> None:  # type: ignore[no-untyped-def]
    from app.models.registry import read_facts_cached

    paths = ctx.paths
    assert [u.files for u in cache_usage(paths)] == [0, 0, 0]
    store = StateStore(paths.state_cache_dir, 10**9)

    def writer(size: int):  # type: ignore[no-untyped-def]
        def write(tmp: Path) -> int:
            tmp.write_bytes(b"s" * size)
            return size

        return write

    store.save("k1", 100, writer(5000))
    store.save("k2", 200, writer(7000))
    in_progress = paths.state_cache_dir / ".k3.12345.tmp"
    in_progress.write_bytes(b"half")
    read_facts_cached(tiny_qwen35, paths.models_dir / "facts")
    snapshots, facts, _pages = cache_usage(paths)
    assert (snapshots.files, snapshots.bytes) == (2, 12000) and facts.files == 1
    freed = clear_caches(paths)
    assert freed == 12000 + facts.bytes
    assert [u.files for u in cache_usage(paths)] == [0, 0, 0]
    assert in_progress.exists() and store.lookup("k1") is None
    assert read_facts_cached(tiny_qwen35, paths.models_dir / "facts").architecture == "qwen35"  # rebuilt
    assert human_size(1536) == "1.5 KB" and human_size(3 * 1024**3) == "3.0 GB" and human_size(12) == "12 bytes"


def test_a_model_registered_by_another_window_meanwhile_is_one_row(ctx, tiny_qwen35: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Two starts on a fresh home register the starter at once: the second finds the first's row
    between its look and its insert (sha256 is unique) and takes it instead of failing."""
    from app.context import open_app
    from app.store import models as registry

    other = open_app()  # another window or command: its own connection to the same SQLite file
    real_insert = registry.insert_row
    raced: list[bool] = []

    def meanwhile(db, table: str, row: dict) -> int:  # type: ignore[no-untyped-def, type-arg]
        if db is ctx.db and not raced:  # our first insert: the other window's lands just before it
            raced.append(True)
            other.models.add(tiny_qwen35)
        return real_insert(db, table, row)

    monkeypatch.setattr(registry, "insert_row", meanwhile)
    try:
        record, created = ctx.models.add(tiny_qwen35)
    finally:
        other.close()
    assert raced and not created
    assert [r.sha256 for r in ctx.models.all()] == [record.sha256]
