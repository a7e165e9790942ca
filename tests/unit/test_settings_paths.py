from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from app.errors import FolioError
from app.paths import default_paths
from app.settings import SCHEMA_VERSION, Settings, load_settings, save_settings


def test_folio_home_overrides_all_three_dirs(folio_home: Path) -> None:
    paths = default_paths().ensure()
    assert paths.config_dir.parent == paths.data_dir.parent == paths.cache_dir.parent == folio_home.resolve()
    for d in (paths.config_dir, paths.data_dir, paths.cache_dir, paths.blobs_dir):
        assert d.is_dir()
        if os.name == "posix":
            assert stat.S_IMODE(d.stat().st_mode) == 0o700


def test_without_folio_home_uses_platform_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv("FOLIO_HOME")
    paths = default_paths()
    assert paths.data_dir == Path(platformdirs.user_data_dir("Folio", appauthor=False))


def test_missing_settings_file_gives_defaults(tmp_path: Path) -> None:
    assert load_settings(tmp_path / "none.toml") == Settings()


def test_settings_round_trip_with_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    settings = Settings(thinking=True, context_cap=65536, kv_cache_type="q8_0")
    settings.limits.max_pages = 10
    save_settings(settings, path)
    text = path.read_text()
    assert f"schema_version = {SCHEMA_VERSION}" in text
    assert load_settings(path) == settings
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("content", "fragment"),
    [
        ("schema_version = 1\nthinking = [", "not valid TOML"),
        ("schema_version = 99\n", "newer Folio"),
        ('schema_version = 1\nthreads = "four"\n', "wrong kind"),
        ('schema_version = 1\nkv_cache_type = "q3"\n', "kv_cache_type"),
        ("schema_version = 1\ndraft_tokens = 0\n", "draft_tokens must be between 1 and 16"),
        ("schema_version = 1\nspeculative = 1\n", "wrong kind"),
    ],
)
def test_bad_settings_give_one_clear_line(tmp_path: Path, content: str, fragment: str) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(content)
    with pytest.raises(FolioError) as err:
        load_settings(path)
    assert fragment in str(err.value)
    assert "\n" not in str(err.value)


def test_unknown_keys_are_ignored(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    path.write_text("schema_version = 1\nfuture_option = true\nthreads = 3\n")
    assert load_settings(path).threads == 3


def test_a_save_keeps_what_another_folio_saved_meanwhile(folio_home: Path) -> None:
    """The window reads settings.toml at its start; `folio matter use` and `folio models use` write it
    while the window is open. Saving the window's settings afterwards writes only what the window
    changed, in sections value by value, and keeps the command's values."""
    from app.context import open_app
    from tests.conftest import run_folio

    window = open_app()
    try:
        window.settings.max_answer_tokens = 321
        window.save_settings()  # the file exists from here on
        code, _out, err = run_folio("matter", "new", "Acme v. Brown")
        assert code == 0, err
        code, _out, err = run_folio("matter", "use", "Acme v. Brown")
        assert code == 0, err
        other = load_settings(window.paths.settings_file)
        other.ocr.language = "deu"
        other.extraction.value_chars = 77
        save_settings(other, window.paths.settings_file)  # another process, a whole-file write
        window.settings.extraction.quote_chars = 55  # the same section, another value
        window.settings.read_ahead = not window.settings.read_ahead
        window.save_settings()
        saved = load_settings(window.paths.settings_file)
        assert saved.matter == "Acme v. Brown" and window.settings.matter == ""
        assert (saved.ocr.language, saved.extraction.value_chars) == ("deu", 77)
        assert saved.extraction.quote_chars == 55 and saved.read_ahead == window.settings.read_ahead
        assert saved.max_answer_tokens == 321
        window.settings.matter = "Acme v. Brown"
        window.settings.max_answer_tokens = 400
        window.save_settings()
        assert load_settings(window.paths.settings_file).max_answer_tokens == 400
    finally:
        window.close()
