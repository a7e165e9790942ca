"""Extraction templates: named lists of fields to pull out of every document.

Built-in templates ship as JSON in assets/templates/ and are read-only. User templates are JSON
files of the same format in the config folder (templates/), created and edited from the window
or imported with `folio templates import`. A field keeps its key when renamed, so results stay
aligned across versions; every saved change bumps the version, and each run keeps a snapshot.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from app.catalogue import Catalogue
from app.errors import FolioError, NotFound
from assets import asset_path

FORMAT = 1
MAX_FIELDS = 200
MAX_NAME = 80
MAX_DESCRIPTION = 400
# What a field asks for: a short answer ("Governing Law": "Texas"), or whether a kind of clause is
# there at all, the way CUAD's experts label most of its categories ("Audit Rights": yes/no, with
# the clause quoted when it is there).
TEXT = "text"
YES_NO = "yes_no"
KINDS = (TEXT, YES_NO)
_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,62}$")


def slug(name: str) -> str:
    """A stable key from a display name: 'Rofr/Rofo/Rofn' -> 'rofr_rofo_rofn'."""
    key = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")[:63]
    return key or "field"


@dataclass(frozen=True)
class TemplateField:
    key: str
    name: str
    description: str = ""
    kind: str = TEXT
    search: str = ""  # words a passage holding this field uses, for the word search that points to pages
    question: str = ""  # how a short answer is first asked in plain words (default: from the name)
    # A short answer this one presupposes: where that one is not stated, neither is this, unasked
    # (no notice to stop a renewal where nothing renews).
    needs: str = ""
    # Words the document must call a short answer by (app.extraction.named): an effective date
    # counts only where a sentence calls that date effective or the start of the term. For a yes/no
    # clause: words the quoted clause must use.
    named_by: str = ""

    @property
    def plain_question(self) -> str:
        """The question a short answer is first asked, as a user would ask it in the chat."""
        if self.question:
            return self.question
        what = f" ({self.description.rstrip('.')})" if self.description else ""
        return f"What does this document state as its {self.name.lower()}{what}?"

    @property
    def yes_no(self) -> bool:
        return self.kind == YES_NO


@dataclass(frozen=True)
class Template:
    key: str
    name: str
    version: int
    fields: tuple[TemplateField, ...]
    description: str = ""
    builtin: bool = False

    # -- (de)serialization ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "key": self.key,
            "name": self.name,
            "version": self.version,
            "description": self.description,
            "fields": [field_dict(f) for f in self.fields],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n"

    @classmethod
    def from_dict(cls, raw: Any, *, builtin: bool = False, source: str = "template") -> Template:
        if not isinstance(raw, dict):
            raise FolioError(f"{source}: a template must be a JSON object")
        if raw.get("format", FORMAT) != FORMAT:
            raise FolioError(f"{source}: template format {raw.get('format')!r} is not supported by this Folio")
        fields_raw = raw.get("fields")
        if not isinstance(fields_raw, list):
            raise FolioError(f"{source}: 'fields' must be a list")
        fields: list[TemplateField] = []
        for item in fields_raw:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                raise FolioError(f"{source}: every field needs a 'name'")
            name = item["name"]
            key = item.get("key") or slug(name)
            description = item.get("description", "")
            kind = item.get("kind", TEXT)
            search = item.get("search", "")
            question = item.get("question", "")
            needs = item.get("needs", "")
            named_by = item.get("named_by", "")
            if not all(isinstance(v, str) for v in (key, description, search, question, needs, named_by)):
                raise FolioError(f"{source}: field keys, descriptions, search words and questions must be text")
            if kind not in KINDS:
                raise FolioError(f"{source}: the kind of {name!r} must be one of {', '.join(KINDS)}")
            fields.append(
                TemplateField(key, name, description, kind, search, question.strip(), needs.strip(), named_by.strip())
            )
        version = raw.get("version", 1)
        name = raw.get("name") or raw.get("key")
        key = raw.get("key") or (slug(name) if isinstance(name, str) else "")
        if not isinstance(version, int) or isinstance(version, bool) or not isinstance(name, str):
            raise FolioError(f"{source}: 'version' must be a whole number and 'name' text")
        template = cls(
            key=key,
            name=name,
            version=version,
            fields=tuple(fields),
            description=str(raw.get("description", "")),
            builtin=builtin,
        )
        template.validate(source)
        return template

    @property
    def sha256(self) -> str:
        """Identifies exactly what was asked: same hash, same fields and wording."""
        content = {k: v for k, v in self.to_dict().items() if k not in ("version",)}
        return hashlib.sha256(json.dumps(content, sort_keys=True, ensure_ascii=False).encode()).hexdigest()

    def validate(self, source: str = "template") -> None:
        if not _KEY_RE.match(self.key):
            raise FolioError(f"{source}: key {self.key!r} must be lowercase letters, digits and '_'")
        if not self.name.strip() or len(self.name) > MAX_NAME:
            raise FolioError(f"{source}: the name must be 1 to {MAX_NAME} characters")
        if not 1 <= len(self.fields) <= MAX_FIELDS:
            raise FolioError(f"{source}: a template needs 1 to {MAX_FIELDS} fields")
        if self.version < 1:
            raise FolioError(f"{source}: version must be 1 or more")
        keys: set[str] = set()
        names: set[str] = set()
        for f in self.fields:
            if not _KEY_RE.match(f.key):
                raise FolioError(f"{source}: field key {f.key!r} must be lowercase letters, digits and '_'")
            if not f.name.strip() or len(f.name) > MAX_NAME or "\n" in f.name:
                raise FolioError(f"{source}: field names must be one line of 1 to {MAX_NAME} characters")
            if max(len(f.description), len(f.search), len(f.question), len(f.named_by)) > MAX_DESCRIPTION:
                raise FolioError(
                    f"{source}: the description, search words, question or naming words of {f.name!r} is over "
                    f"{MAX_DESCRIPTION} characters"
                )
            if f.key in keys or f.name.strip().lower() in names:
                raise FolioError(f"{source}: field {f.name!r} appears twice")
            keys.add(f.key)
            names.add(f.name.strip().lower())
        short = {f.key for f in self.fields if not f.yes_no}
        for f in self.fields:
            if f.needs and (f.yes_no or f.needs == f.key or f.needs not in short):
                raise FolioError(f"{source}: {f.name!r} can only need another short-answer field of the template")

    # -- editing (each returns a new template; TemplateStore.save bumps the version) ---------------
    def field(self, key: str) -> TemplateField:
        for f in self.fields:
            if f.key == key:
                return f
        raise NotFound(f"template {self.key!r} has no field {key!r}")

    def with_field_added(self, name: str, description: str = "", kind: str = TEXT) -> Template:
        base = slug(name)
        key, n = base, 2
        existing = {f.key for f in self.fields}
        while key in existing:
            key, n = f"{base[:60]}_{n}", n + 1
        return replace(self, fields=(*self.fields, TemplateField(key, name.strip(), description.strip(), kind)))

    def without_field(self, key: str) -> Template:
        self.field(key)
        return replace(self, fields=tuple(_unneeding(f, key) for f in self.fields if f.key != key))

    def with_field_renamed(self, key: str, name: str) -> Template:
        self.field(key)
        return replace(self, fields=tuple(replace(f, name=name.strip()) if f.key == key else f for f in self.fields))

    def with_field_description(self, key: str, description: str) -> Template:
        self.field(key)
        return replace(
            self, fields=tuple(replace(f, description=description.strip()) if f.key == key else f for f in self.fields)
        )

    def with_field_kind(self, key: str, kind: str) -> Template:
        self.field(key)
        if kind not in KINDS:
            raise FolioError(f"a field's kind must be one of {', '.join(KINDS)}")
        changed = [replace(f, kind=kind) if f.key == key else f for f in self.fields]
        if kind == YES_NO:  # a yes/no clause is no short answer to presuppose, nor does it presuppose one
            changed = [replace(f, needs="") if key in (f.key, f.needs) else f for f in changed]
        return replace(self, fields=tuple(changed))

    def with_field_moved(self, key: str, position: int) -> Template:
        moving = self.field(key)
        rest = [f for f in self.fields if f.key != key]
        rest.insert(max(0, min(position, len(rest))), moving)
        return replace(self, fields=tuple(rest))


def field_dict(f: TemplateField) -> dict[str, str]:
    out = {"key": f.key, "name": f.name, "description": f.description, "kind": f.kind, "search": f.search}
    # Written only when set, so a template without them keeps its sha256 (what its runs are keyed on).
    if f.question:
        out["question"] = f.question
    if f.needs:
        out["needs"] = f.needs
    if f.named_by:
        out["named_by"] = f.named_by
    return out


def _unneeding(f: TemplateField, gone: str) -> TemplateField:
    return replace(f, needs="") if f.needs == gone else f


class TemplateStore(Catalogue[Template]):
    """Built-in templates (read-only) and the user's, which the window edits and import adds."""

    def __init__(self, user_dir: Path, builtin_dir: Path | None = None) -> None:
        super().__init__("template", user_dir, builtin_dir or asset_path("templates"), _parse)

    @classmethod
    def for_config(cls, config_dir: Path) -> TemplateStore:
        return cls(config_dir / "templates")

    def save(self, template: Template) -> Template:
        """Store a user template; its version goes up by one when anything changed."""
        template.validate()
        if self.is_builtin(template.key):
            raise FolioError(f"{template.key!r} is a built-in template and cannot be changed; copy it first")
        return self.store(template)

    def create(self, key: str, name: str, fields: list[tuple[str, str]]) -> Template:
        if any(t.key == key for t in self.all()):
            raise FolioError(f"a template {key!r} already exists")
        template = Template(key=key, name=name, version=1, fields=())
        for field_name, description in fields:
            template = template.with_field_added(field_name, description)
        return self.save(template)

    def copy(self, source_key: str, new_key: str, name: str | None = None) -> Template:
        if any(t.key == new_key for t in self.all()):
            raise FolioError(f"a template {new_key!r} already exists")
        source = self.get(source_key)
        return self.save(replace(source, key=new_key, name=name or f"{source.name} (copy)", version=1))

    def delete(self, key: str) -> None:
        template = self.get(key)
        if template.builtin:
            raise FolioError(f"{key!r} is a built-in template and cannot be deleted")
        (self.user_dir / f"{key}.json").unlink()


def _parse(raw: Any, builtin: bool, source: str) -> Template:
    return Template.from_dict(raw, builtin=builtin, source=source)
