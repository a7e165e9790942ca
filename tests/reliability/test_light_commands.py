"""Nothing heavy on a light command: on a fresh home, `folio add`, `list`, `show` and `search` write no
model file (the 240 MB starter model is assembled only by a command that needs a model)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_folio


def test_list_show_search_and_add_on_a_fresh_home_write_no_model_file(tmp_path: Path, folio_home: Path) -> None:
    from app.models.registry import starter_sha256

    note = tmp_path / "note.txt"
    note.write_text("The Supplier shall deliver the goods within thirty days.\n")
    for args in (["add", str(note)], ["list"], ["list", "--json"], ["show", "1"], ["search", "Supplier"]):
        code, _out, err = run_folio(*args)
        assert code == 0, err
        assert "starter model" not in err
    # Each listed document's reading state names the starter model by its checked sha256 all the same.
    listed = json.loads(run_folio("list", "--json")[1])
    assert [d["title"] for d in listed] == ["note"]
    assert "(not read yet)" in run_folio("list")[1]
    written = [p for p in folio_home.rglob("*") if p.is_file()]
    assert not [p for p in written if p.suffix == ".gguf" or "models" in p.relative_to(folio_home).parts], written
    assert starter_sha256()  # known without the file: what the reading states are keyed by
