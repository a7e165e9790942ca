"""benchmarks/bench_read.py's options: the read-ahead section takes its model rows by name and refuses
others before any model is loaded (a typo must not cost a quarter of an hour of reading)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bench_read import parse_args


def test_read_ahead_rows_are_named_models() -> None:
    assert parse_args([]).read_ahead is False
    assert parse_args(["--read-ahead"]).models == ["starter"]
    assert parse_args(["--read-ahead", "--models", "starter,eval"]).models == ["starter", "eval"]


@pytest.mark.parametrize("models", ["starter,1.5b", "", "starter,"])
def test_unknown_model_rows_are_refused(models: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        parse_args(["--read-ahead", "--models", models])
    assert exc.value.code == 2
    assert "--models takes starter and/or eval" in capsys.readouterr().err


def test_a_subsection_is_replaced_alone_and_survives_its_section(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from benchmarks import results

    monkeypatch.setattr(results, "RESULTS", tmp_path / "RESULTS.md")
    results.write_section("## Read", ["old table"])
    results.write_section("## Next", ["other"])
    results.write_subsection("## Read", "### Several", ["### Several", "", "first"])
    results.write_subsection("## Read", "### Several", ["### Several", "", "second"])
    results.write_section("## Read", ["new table"], keep_subsections=True)  # the main mode's rewrite
    text = (tmp_path / "RESULTS.md").read_text()
    assert text == "# Benchmark results\n\n## Read\n\nnew table\n\n### Several\n\nsecond\n\n## Next\n\nother\n"
    assert parse_args(["--several", "--threads", "1"]).several is True


def test_a_thread_count_below_one_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for bad in ("-1", "0", "two"):
        with pytest.raises(SystemExit):
            parse_args(["--threads", bad])
        assert "is not a thread count (1 or more)" in capsys.readouterr().err
