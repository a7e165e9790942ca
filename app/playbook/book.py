"""Playbooks: a firm's standard positions as rules, each read from one extraction field.

A playbook is a JSON file like an extraction template (built-in ones in assets/playbooks/, the user's in
the config folder's playbooks/). Each rule names the field it reads: a key of the playbook's
`template` (by default the built-in `contract_review`), or a field written out in the rule the way a
template writes one. A playbook compiles to an extraction template of the fields its rules read
(`Playbook.template`), so the extraction runner asks them, scored and grounded, on the document read
once; the rules are then decided by code (app.playbook.values, app.playbook.review).

Rule kinds: `present` (a clause must be there), `absent` (it must not be), `one_of` (the value must be
one of the acceptable places or words; fallback ones are a fallback), `at_least` / `at_most` (a
duration or amount against the acceptable line and the fallback line). Every problem in a file is one
line naming the rule and the field that is wrong; a file that fails changes nothing.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.catalogue import Catalogue
from app.errors import FolioError, NotFound
from app.extraction.templates import MAX_DESCRIPTION, MAX_NAME, Template, TemplateField, TemplateStore, field_dict
from app.playbook.values import AMOUNT, DURATION, MET, MISSING, PLACE, TEXT, threshold
from assets import asset_path

FORMAT = 1
MAX_RULES = 100
MAX_WORDING = 2000
MAX_ENTRIES = 60
DEFAULT_TEMPLATE = "contract_review"

PRESENT = "present"
ABSENT = "absent"
ONE_OF = "one_of"
AT_LEAST = "at_least"
AT_MOST = "at_most"
KINDS = (PRESENT, ABSENT, ONE_OF, AT_LEAST, AT_MOST)
VALUE_KINDS = {ONE_OF: (PLACE, TEXT), AT_LEAST: (DURATION, AMOUNT), AT_MOST: (DURATION, AMOUNT)}
IF_ABSENT = (MISSING, MET)  # what a value rule says when the contract does not state the value
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,62}$")
_RULE_KEYS = {"key", "name", "position", "kind", "field", "value", "acceptable", "fallback", "unacceptable",
              "if_absent", "proposed_wording"}  # fmt: skip


@dataclass(frozen=True)
class Rule:
    key: str
    name: str
    position: str  # the firm's position in plain words
    kind: str
    field: TemplateField  # what the rule reads (resolved from the template, or written in the rule)
    value: str = ""  # a value rule's kind of value: place, text, duration or amount
    acceptable: tuple[str, ...] = ()  # one_of: the entries; at_least / at_most: one line
    fallback: tuple[str, ...] = ()
    unacceptable: tuple[str, ...] = ()
    if_absent: str = MISSING
    proposed_wording: str = ""
    field_ref: str = ""  # the template field's key when the rule names one, else '' (written out)

    @property
    def value_rule(self) -> bool:
        return self.kind in VALUE_KINDS

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "name": self.name, "position": self.position, "kind": self.kind}
        out["field"] = self.field_ref or _field_dict(self.field)
        if self.value_rule:
            out["value"] = self.value
            for name in ("acceptable", "fallback", "unacceptable"):
                entries = getattr(self, name)
                if entries:
                    out[name] = list(entries) if self.kind == ONE_OF else entries[0]
            out["if_absent"] = self.if_absent
        out["proposed_wording"] = self.proposed_wording
        return out


@dataclass(frozen=True)
class Playbook:
    key: str
    name: str
    version: int
    rules: tuple[Rule, ...]
    description: str = ""
    template_key: str = DEFAULT_TEMPLATE
    builtin: bool = False

    def to_dict(self, *, inline: bool = False) -> dict[str, Any]:
        """`inline`: every field written out in its rule, so the file works where the template is not."""
        rules = [r.to_dict() if not inline else {**r.to_dict(), "field": _field_dict(r.field)} for r in self.rules]
        return {"format": FORMAT, "key": self.key, "name": self.name, "version": self.version,
                "description": self.description, "template": self.template_key, "rules": rules}  # fmt: skip

    def to_json(self, *, inline: bool = False) -> str:
        return json.dumps(self.to_dict(inline=inline), indent=2, ensure_ascii=False) + "\n"

    @property
    def sha256(self) -> str:
        """What was checked, exactly: same hash, same rules, fields and wording (the version aside)."""
        content = {k: v for k, v in self.to_dict(inline=True).items() if k not in ("version", "template")}
        return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def rule(self, key: str) -> Rule:
        for r in self.rules:
            if r.key == key:
                return r
        raise NotFound(f"playbook {self.key!r} has no rule {key!r} (rules: {', '.join(r.key for r in self.rules)})")

    def template(self) -> Template:
        """The extraction template of the fields the rules read, each once, in the rules' order. A field's
        `needs` is dropped: the playbook asks only its own fields, each on its own."""
        fields: dict[str, TemplateField] = {}
        for r in self.rules:
            fields.setdefault(r.field.key, replace(r.field, needs=""))
        name = f"Playbook: {self.name}"[:MAX_NAME]
        return Template(key=f"playbook_{self.key}"[:63], name=name, version=self.version, fields=tuple(fields.values()))

    # -- reading -----------------------------------------------------------------------------------
    @classmethod
    def from_dict(
        cls, raw: Any, templates: TemplateStore, *, builtin: bool = False, source: str = "playbook"
    ) -> Playbook:
        if not isinstance(raw, dict):
            raise FolioError(f"{source}: a playbook must be a JSON object")
        if raw.get("format", FORMAT) != FORMAT:
            raise FolioError(f"{source}: playbook format {raw.get('format')!r} is not supported by this Folio")
        key, name, version = raw.get("key"), raw.get("name"), raw.get("version", 1)
        description, template_key = raw.get("description", ""), raw.get("template", DEFAULT_TEMPLATE)
        if not isinstance(key, str) or not _KEY_RE.match(key):
            raise FolioError(f"{source}: 'key' must be lowercase letters, digits and '_' (got {key!r})")
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise FolioError(f"{source}: 'name' must be text of 1 to {MAX_NAME} characters")
        if not isinstance(version, int) or isinstance(version, bool) or version < 1:
            raise FolioError(f"{source}: 'version' must be a whole number, 1 or more")
        if not isinstance(description, str) or not isinstance(template_key, str):
            raise FolioError(f"{source}: 'description' and 'template' must be text")
        rules_raw = raw.get("rules")
        if not isinstance(rules_raw, list) or not 1 <= len(rules_raw) <= MAX_RULES:
            raise FolioError(f"{source}: 'rules' must be a list of 1 to {MAX_RULES} rules")
        base: Template | None = None
        rules: list[Rule] = []
        for n, item in enumerate(rules_raw, start=1):
            where = f"{source}: rule {n}"
            if isinstance(item, dict) and isinstance(item.get("key"), str):
                where = f"{source}: rule {item['key']!r}"
            if isinstance(item, dict) and isinstance(item.get("field"), str) and base is None:
                base = _base_template(templates, template_key, source)  # read only when a rule names one of its fields
            rules.append(_rule(item, base, where))
        _unique(rules, source)
        return cls(key, name.strip(), version, tuple(rules), description, template_key, builtin)


def _base_template(templates: TemplateStore, key: str, source: str) -> Template:
    try:
        return templates.get(key)
    except NotFound:
        raise FolioError(f"{source}: 'template': no extraction template {key!r}") from None


def _rule(item: Any, base: Template | None, where: str) -> Rule:
    if not isinstance(item, dict):
        raise FolioError(f"{where}: a rule must be a JSON object")
    unknown = sorted(set(item) - _RULE_KEYS)
    if unknown:
        raise FolioError(f"{where}: unknown field {unknown[0]!r}")
    key, name, position = item.get("key"), item.get("name"), item.get("position", "")
    if not isinstance(key, str) or not _KEY_RE.match(key):
        raise FolioError(f"{where}: 'key' must be lowercase letters, digits and '_'")
    if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME or "\n" in name:
        raise FolioError(f"{where}: 'name' must be one line of 1 to {MAX_NAME} characters")
    if not isinstance(position, str) or not position.strip() or len(position) > MAX_DESCRIPTION:
        raise FolioError(f"{where}: 'position' must be plain words, 1 to {MAX_DESCRIPTION} characters")
    kind = item.get("kind")
    if kind not in KINDS:
        raise FolioError(f"{where}: 'kind' must be one of {', '.join(KINDS)} (got {kind!r})")
    wording = item.get("proposed_wording", "")
    if not isinstance(wording, str) or len(wording) > MAX_WORDING:
        raise FolioError(f"{where}: 'proposed_wording' must be text of at most {MAX_WORDING} characters")
    if kind != ABSENT and not wording.strip():
        raise FolioError(f"{where}: 'proposed_wording' is needed: it is what Folio proposes when the rule is not met")
    field, ref = _field(item.get("field"), base, where)
    rule = Rule(key, name.strip(), position.strip(), kind, field, proposed_wording=wording.strip(), field_ref=ref)
    if kind not in VALUE_KINDS:
        extra = [k for k in ("value", "acceptable", "fallback", "unacceptable", "if_absent") if k in item]
        if extra:
            raise FolioError(f"{where}: {extra[0]!r} is only for one_of, at_least and at_most rules")
        return rule
    if field.yes_no:
        raise FolioError(f"{where}: 'field' {field.key!r} is a yes/no clause; a {kind} rule reads a short answer")
    value = item.get("value")
    if value not in VALUE_KINDS[kind]:
        raise FolioError(f"{where}: 'value' must be one of {', '.join(VALUE_KINDS[kind])} for a {kind} rule")
    if_absent = item.get("if_absent", MISSING)
    if if_absent not in IF_ABSENT:
        raise FolioError(f"{where}: 'if_absent' must be one of {', '.join(IF_ABSENT)}")
    lists = {n: _entries(item.get(n), n, kind, value, where) for n in ("acceptable", "fallback", "unacceptable")}
    if not lists["acceptable"]:
        raise FolioError(f"{where}: 'acceptable' is needed for a {kind} rule")
    if kind == ONE_OF:
        seen: set[str] = set()
        for n, entries in lists.items():
            for entry in entries:
                if entry.lower() in seen:
                    raise FolioError(f"{where}: {n!r}: {entry!r} appears twice")
                seen.add(entry.lower())
    else:
        _ordered(lists, kind, value, where)
    return replace(
        rule,
        value=value,
        if_absent=if_absent,
        acceptable=lists["acceptable"],
        fallback=lists["fallback"],
        unacceptable=lists["unacceptable"],
    )


def _field(raw: Any, base: Template | None, where: str) -> tuple[TemplateField, str]:
    if isinstance(raw, str):
        assert base is not None  # loaded before any rule that names a template field
        for f in base.fields:
            if f.key == raw:
                return f, raw
        raise FolioError(f"{where}: 'field': template {base.key!r} has no field {raw!r}")
    if isinstance(raw, dict):
        try:
            written = Template.from_dict({"key": "rule", "name": "rule", "fields": [raw]}, source=where)
        except FolioError as exc:
            raise FolioError(f"{where}: 'field': {str(exc).removeprefix(f'{where}: ')}") from None
        return written.fields[0], ""
    raise FolioError(f"{where}: 'field' must be a template field's key or a field written out")


def _entries(raw: Any, name: str, kind: str, value: str, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    items = raw if isinstance(raw, list) and kind == ONE_OF else [raw]
    if kind == ONE_OF and not isinstance(raw, list):
        raise FolioError(f"{where}: {name!r} must be a list of {value}s for a one_of rule")
    if len(items) > MAX_ENTRIES or not all(isinstance(i, str) and i.strip() and len(i) <= MAX_NAME for i in items):
        raise FolioError(f"{where}: {name!r} must hold 1 to {MAX_ENTRIES} entries of 1 to {MAX_NAME} characters")
    entries = tuple(i.strip() for i in items)
    if value in (DURATION, AMOUNT):
        for entry in entries:
            if threshold(entry, value) is None:
                example = "'12 months'" if value == DURATION else "'USD 1,000,000'"
                currency = " with its currency" if value == AMOUNT else ""
                raise FolioError(f"{where}: {name!r} must be one {value}{currency}, such as {example} (got {entry!r})")
    return entries


def _ordered(lists: dict[str, tuple[str, ...]], kind: str, value: str, where: str) -> None:
    """The fallback line lies beyond the acceptable one, the unacceptable line beyond both."""
    lines = [(n, threshold(lists[n][0], value)) for n in ("acceptable", "fallback", "unacceptable") if lists[n]]
    for (_a, first), (b, second) in itertools.pairwise(lines):
        assert first is not None and second is not None
        if value == AMOUNT and first.unit != second.unit:
            raise FolioError(f"{where}: {b!r} must be in the same currency as the lines before it")
        x, y = (first.days(), second.days()) if value == DURATION else (first.value, second.value)
        if (kind == AT_LEAST and y >= x) or (kind == AT_MOST and y <= x):
            side = "lower" if kind == AT_LEAST else "higher"
            raise FolioError(f"{where}: {b!r} must be {side} than the lines before it for an {kind} rule")


def _unique(rules: list[Rule], source: str) -> None:
    keys: set[str] = set()
    fields: dict[str, TemplateField] = {}
    for r in rules:
        if r.key in keys:
            raise FolioError(f"{source}: rule {r.key!r}: 'key' appears twice")
        keys.add(r.key)
        known = fields.setdefault(r.field.key, r.field)
        if known != r.field:
            raise FolioError(f"{source}: rule {r.key!r}: 'field' {r.field.key!r} is written two different ways")


def _field_dict(f: TemplateField) -> dict[str, str]:
    """A field written out in a rule: as a template writes it, without `needs` (a rule's field stands alone)."""
    return field_dict(replace(f, needs=""))


class PlaybookStore(Catalogue[Playbook]):
    """Built-in playbooks (read-only) and the user's, which import and export replace as whole files."""

    def __init__(self, user_dir: Path, templates: TemplateStore, builtin_dir: Path | None = None) -> None:
        self.templates = templates  # where a rule that names a template's field finds it

        def parse(raw: Any, builtin: bool, source: str) -> Playbook:
            return Playbook.from_dict(raw, self.templates, builtin=builtin, source=source)

        super().__init__("playbook", user_dir, builtin_dir or asset_path("playbooks"), parse)

    @classmethod
    def for_config(cls, config_dir: Path) -> PlaybookStore:
        return cls(config_dir / "playbooks", TemplateStore.for_config(config_dir))

    def export_text(self, key: str) -> str:
        """A playbook as a self-contained file: its fields written out, so it imports where the
        template it names is not."""
        return self.get(key).to_json(inline=True)
