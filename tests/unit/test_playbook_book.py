"""Playbooks: the built-in one loads and compiles to an extraction template; every problem in a file is one
line naming the rule and the field; a damaged file changes nothing."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from app.errors import FolioError
from app.extraction.templates import TemplateStore
from app.playbook.book import Playbook, PlaybookStore

RULE: dict[str, Any] = {
    "key": "renewal",
    "name": "Renewal",
    "position": "Renews for at most a year.",
    "kind": "at_most",
    "field": "renewal_term",
    "value": "duration",
    "acceptable": "12 months",
    "fallback": "24 months",
    "if_absent": "met",
    "proposed_wording": "It does not renew automatically.",
}
BOOK: dict[str, Any] = {"key": "mine", "name": "My positions", "rules": [RULE]}


def _store(tmp_path: Path) -> PlaybookStore:
    return PlaybookStore.for_config(tmp_path / "config")


def _load(raw: Any, tmp_path: Path) -> Playbook:
    return Playbook.from_dict(raw, TemplateStore.for_config(tmp_path / "config"), source="mine.json")


def test_the_builtin_playbook_compiles_to_a_template_of_its_fields(tmp_path: Path) -> None:
    book = _store(tmp_path).get("commercial_contract")
    assert book.builtin and len(book.rules) == 10
    template = book.template()
    template.validate()
    assert [f.key for f in template.fields] == [r.field.key for r in book.rules]
    assert all(not f.needs for f in template.fields)
    kinds = {r.key: r.kind for r in book.rules}
    assert kinds["governing_law"] == "one_of" and kinds["renewal_term"] == "at_most"
    assert kinds["non_compete"] == kinds["exclusivity"] == kinds["uncapped_liability"] == "absent"
    assert all(r.proposed_wording for r in book.rules if r.kind != "absent")


def _with(change: dict[str, Any]) -> dict[str, Any]:
    raw = copy.deepcopy(BOOK)
    raw["rules"][0].update(change)
    return raw


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"kind": "at_best"}, "'kind'"),
        ({"acceptable": "soon"}, "'acceptable' must be one duration"),
        ({"fallback": "6 months"}, "'fallback' must be higher"),
        ({"value": "place"}, "'value' must be one of duration, amount"),
        ({"field": "no_such_field"}, "'field': template 'contract_review' has no field 'no_such_field'"),
        ({"field": "audit_rights"}, "'field' 'audit_rights' is a yes/no clause"),
        ({"field": {"name": "Rent", "kind": "maybe"}}, "'field': the kind of 'Rent'"),
        ({"proposed_wording": ""}, "'proposed_wording' is needed"),
        ({"if_absent": "fine"}, "'if_absent'"),
        ({"position": ""}, "'position'"),
        ({"colour": "red"}, "unknown field 'colour'"),
    ],
)
def test_a_bad_rule_is_one_line_naming_the_rule_and_the_field(
    tmp_path: Path, change: dict[str, Any], named: str
) -> None:
    with pytest.raises(FolioError) as caught:
        _load(_with(change), tmp_path)
    line = str(caught.value)
    assert "\n" not in line and line.startswith("mine.json: rule 'renewal': ") and named in line, line


def test_amount_lines_need_their_currency_and_one_of_needs_a_list(tmp_path: Path) -> None:
    amount = {"value": "amount", "kind": "at_least", "acceptable": "1,000,000", "fallback": None}
    with pytest.raises(FolioError, match="'acceptable' must be one amount with its currency"):
        _load(_with(amount), tmp_path)
    place = {"kind": "one_of", "field": "governing_law", "value": "place", "acceptable": "Delaware", "fallback": None}
    with pytest.raises(FolioError, match="'acceptable' must be a list of places"):
        _load(_with(place), tmp_path)


def test_a_field_written_out_in_the_rule_works_without_the_template(tmp_path: Path) -> None:
    field = {"name": "Annual Rent", "description": "Yearly base rent."}
    raw = _with({"field": field, "value": "amount", "kind": "at_most", "acceptable": "USD 100,000",
                 "fallback": "$120,000"})  # fmt: skip
    raw["template"] = "not_installed"
    book = _load(raw, tmp_path)
    assert book.rules[0].field.key == "annual_rent" and book.template().fields[0].name == "Annual Rent"
    again = _load(json.loads(book.to_json()), tmp_path)
    assert again.sha256 == book.sha256


def test_import_export_round_trip_and_a_damaged_file_changes_nothing(tmp_path: Path) -> None:
    store = _store(tmp_path)
    good = tmp_path / "mine.json"
    good.write_text(json.dumps(BOOK))
    imported = store.import_file(good)
    assert imported.version == 1 and [b.key for b in store.all()] == ["commercial_contract", "mine"]
    kept = (store.user_dir / "mine.json").read_bytes()
    damaged = tmp_path / "damaged.json"
    damaged.write_text(json.dumps(BOOK)[:-20])
    with pytest.raises(FolioError) as caught:
        store.import_file(damaged)
    assert "\n" not in str(caught.value) and "damaged.json cannot be read" in str(caught.value)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(_with({"acceptable": "whenever"})))
    with pytest.raises(FolioError, match="rule 'renewal': 'acceptable'"):
        store.import_file(bad)
    assert (store.user_dir / "mine.json").read_bytes() == kept
    assert sorted(p.name for p in store.user_dir.iterdir()) == ["mine.json"]
    # The export is self-contained: its fields written out, so it imports where the template is not.
    exported = json.loads(store.export_text("mine"))
    assert exported["rules"][0]["field"]["key"] == "renewal_term"
    # A damaged user file on disk is named and left alone; the others still load.
    (store.user_dir / "broken.json").write_text("{not json")
    assert [b.key for b in store.all()] == ["commercial_contract", "mine"]
    assert len(store.damaged) == 1 and store.damaged[0].startswith("playbook broken.json cannot be read")
    assert (store.user_dir / "broken.json").read_text() == "{not json"


def test_a_builtin_key_cannot_be_imported_over(tmp_path: Path) -> None:
    path = tmp_path / "cc.json"
    path.write_text(json.dumps({**BOOK, "key": "commercial_contract"}))
    with pytest.raises(FolioError, match="built-in playbook"):
        _store(tmp_path).import_file(path)
