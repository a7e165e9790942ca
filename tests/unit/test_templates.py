"""Extraction templates: the shipped CUAD and NDA templates, and user templates edited in place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.errors import FolioError
from app.extraction.templates import Template, TemplateStore

CUAD = [
    "Document Name", "Parties", "Agreement Date", "Effective Date", "Expiration Date", "Renewal Term",
    "Notice Period To Terminate Renewal", "Governing Law", "Most Favored Nation", "Non-Compete", "Exclusivity",
    "No-Solicit Of Customers", "Competitive Restriction Exception", "No-Solicit Of Employees", "Non-Disparagement",
    "Termination For Convenience", "Rofr/Rofo/Rofn", "Change Of Control", "Anti-Assignment",
    "Revenue/Profit Sharing", "Price Restrictions", "Minimum Commitment", "Volume Restriction",
    "Ip Ownership Assignment", "Joint Ip Ownership", "License Grant", "Non-Transferable License",
    "Affiliate License-Licensor", "Affiliate License-Licensee", "Unlimited/All-You-Can-Eat-License",
    "Irrevocable Or Perpetual License", "Source Code Escrow", "Post-Termination Services", "Audit Rights",
    "Uncapped Liability", "Cap On Liability", "Liquidated Damages", "Warranty Duration", "Insurance",
    "Covenant Not To Sue", "Third Party Beneficiary",
]  # fmt: skip


def store(tmp_path: Path) -> TemplateStore:
    return TemplateStore(tmp_path / "templates")


def test_contract_review_has_the_41_cuad_categories_each_described(tmp_path: Path) -> None:
    t = store(tmp_path).get("contract_review")
    assert [f.name for f in t.fields] == CUAD
    assert all(f.description and "\n" not in f.description for f in t.fields)
    assert len({f.key for f in t.fields}) == 41 and t.builtin


def test_nda_template_ships(tmp_path: Path) -> None:
    nda = store(tmp_path).get("nda")
    assert nda.builtin and len(nda.fields) >= 10
    assert "Governing Law" in [f.name for f in nda.fields]


def test_user_template_edits_bump_the_version_and_keep_keys(tmp_path: Path) -> None:
    s = store(tmp_path)
    t = s.create("leases", "Commercial leases", [("Landlord", "Who lets the premises"), ("Rent", "")])
    assert (t.version, [f.key for f in t.fields]) == (1, ["landlord", "rent"])
    edited = t.with_field_renamed("rent", "Annual Rent").with_field_description("rent", "Yearly base rent")
    edited = edited.with_field_added("Break Clause", "Early termination right").without_field("landlord")
    edited = edited.with_field_moved("break_clause", 0)
    saved = s.save(edited)
    assert saved.version == 2
    assert [(f.key, f.name) for f in saved.fields] == [("break_clause", "Break Clause"), ("rent", "Annual Rent")]
    assert s.save(saved).version == 2  # nothing changed: same version
    assert s.get("leases") == saved
    assert json.loads((tmp_path / "templates" / "leases.json").read_text())["version"] == 2
    assert saved.sha256 != t.sha256


def test_builtin_templates_are_read_only_but_can_be_copied(tmp_path: Path) -> None:
    s = store(tmp_path)
    builtin = s.get("nda")
    with pytest.raises(FolioError, match="built-in"):
        s.save(builtin.with_field_added("Extra"))
    with pytest.raises(FolioError, match="built-in"):
        s.delete("nda")
    copy = s.copy("nda", "my_nda")
    assert not copy.builtin and copy.fields == builtin.fields
    s.delete("my_nda")
    assert [t.key for t in s.all()] == ["contract_review", "nda"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"key": "x", "name": "X", "fields": []}, "1 to 200 fields"),
        ({"key": "x", "name": "X", "fields": [{"name": "A"}, {"name": "a"}]}, "appears twice"),
        ({"key": "Bad Key", "name": "X", "fields": [{"name": "A"}]}, "lowercase"),
        ({"key": "x", "name": "X", "fields": "A"}, "must be a list"),
        ({"key": "x", "name": "X", "fields": [{"name": "A", "description": "d" * 401}]}, "over 400"),
        ({"key": "x", "name": "X", "fields": [{"name": "A", "question": "q" * 401}]}, "over 400"),
        ({"key": "x", "name": "X", "fields": [{"name": "A", "question": 3}]}, "questions must be text"),
        ({"format": 9, "key": "x", "name": "X", "fields": [{"name": "A"}]}, "not supported"),
    ],
)
def test_invalid_templates_are_refused_with_one_line(raw: dict[str, object], message: str) -> None:
    with pytest.raises(FolioError, match=message) as info:
        Template.from_dict(raw)
    assert "\n" not in str(info.value)


def test_a_field_may_carry_its_own_plain_question() -> None:
    rent = {"name": "Rent", "description": "Yearly rent."}
    plain = Template.from_dict({"key": "x", "name": "X", "fields": [rent]})
    asked = Template.from_dict({"key": "x", "name": "X", "fields": [{**rent, "question": " How much? "}]})
    assert plain.fields[0].plain_question == "What does this document state as its rent (Yearly rent)?"
    assert asked.fields[0].plain_question == "How much?"
    # Written back only when set: a template without questions keeps the hash its runs are keyed on.
    assert "question" not in plain.to_dict()["fields"][0] and asked.to_dict()["fields"][0]["question"] == "How much?"
    assert Template.from_dict(asked.to_dict()) == asked and plain.sha256 != asked.sha256


def test_a_field_may_presuppose_another_short_answer() -> None:
    fields = [
        {"name": "Renewal Term"},
        {"name": "Notice", "needs": "renewal_term"},
        {"name": "Audit", "kind": "yes_no"},
    ]
    t = Template.from_dict({"key": "x", "name": "X", "fields": fields})
    assert t.field("notice").needs == "renewal_term" and Template.from_dict(t.to_dict()) == t
    for needs in ("notice", "audit", "nothing"):  # itself, a yes/no clause, no such field
        bad = [*fields[:1], {"name": "Notice", "needs": needs}, fields[2]]
        with pytest.raises(FolioError, match="can only need another short-answer field"):
            Template.from_dict({"key": "x", "name": "X", "fields": bad})
    # Edits never leave a field needing one that is gone or is no short answer any more.
    assert t.without_field("renewal_term").field("notice").needs == ""
    assert t.with_field_kind("renewal_term", "yes_no").field("notice").needs == ""
    assert t.with_field_kind("notice", "yes_no").field("notice").needs == ""
    t.with_field_kind("renewal_term", "yes_no").validate()


def test_import_file(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"key": "shares", "name": "Share purchase", "fields": [{"name": "Price"}]}))
    t = store(tmp_path).import_file(path)
    assert (t.key, t.version, t.fields[0].key) == ("shares", 1, "price")
    path.write_text("{not json")
    with pytest.raises(FolioError, match="cannot be read"):
        store(tmp_path).import_file(path)


def test_named_by_words_round_trip(tmp_path: Path) -> None:
    effective = store(tmp_path).get("contract_review").field("effective_date")
    assert effective.named_by == "effective commence"
    raw = {"key": "t", "name": "T", "fields": [{"name": "Start", "named_by": "commence"}]}
    t = Template.from_dict(raw)
    assert t.fields[0].named_by == "commence"
    assert Template.from_dict(json.loads(t.to_json())) == t
    assert "named_by" not in json.dumps(
        Template.from_dict({"key": "u", "name": "U", "fields": [{"name": "A"}]}).to_dict()
    )
    assert t.with_field_kind("start", "yes_no").fields[0].named_by == "commence"  # the clause's words
    assert store(tmp_path).get("contract_review").field("insurance").named_by == "insur"


def test_a_damaged_user_template_is_named_and_the_others_still_list(tmp_path: Path, folio_home: Path) -> None:
    """Templates and playbooks share one catalogue: a damaged user file is one warning line, never a
    failed list; asked for by key it is named; an import of its key replaces it."""
    from tests.conftest import run_folio

    user = folio_home / "config" / "templates"
    user.mkdir(parents=True)
    (user / "broken.json").write_text("{not json")
    good = tmp_path / "shares.json"
    good.write_text(json.dumps({"key": "shares", "name": "Share purchase", "fields": [{"name": "Price"}]}))
    assert run_folio("templates", "import", str(good))[:2] == (0, "imported shares (version 1, 1 fields)\n")
    code, out, err = run_folio("templates", "list")
    assert code == 0 and "contract_review" in out and "shares" in out and "broken" not in out
    assert err.startswith("folio: warning: template broken.json cannot be read (") and err.count("\n") == 1
    code, _out, err = run_folio("templates", "show", "broken")
    assert code == 1 and "no template 'broken'" in err and "1 damaged file(s): template broken.json" in err
    mended = tmp_path / "broken.json"
    mended.write_text(json.dumps({"key": "broken", "name": "Mended", "fields": [{"name": "Price"}]}))
    assert run_folio("templates", "import", str(mended))[0] == 0
    assert [t.key for t in TemplateStore(user).user_entries()] == ["broken", "shares"]
    # A file put by hand under a built-in's key is not listed twice.
    (user / "nda.json").write_text(json.dumps({"key": "nda", "name": "Mine", "fields": [{"name": "Price"}]}))
    assert [t.key for t in TemplateStore(user).all()].count("nda") == 1
