"""User settings in a TOML file with a schema_version, written atomically."""

from __future__ import annotations

import dataclasses
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.errors import FolioError
from common.files import atomic_write_text
from ingest.limits import Limits

SCHEMA_VERSION = 1
KV_TYPES = ("auto", "f16", "q8_0", "q4_0")
MAX_DRAFT_TOKENS = 16


@dataclass
class FileLimits:
    """ingest.Limits in the units a user sets them in (settings.toml, the settings dialog)."""

    max_file_mb: int = 2048
    max_pages: int = 5000
    max_video_minutes: int = 180

    def for_ingest(self) -> Limits:
        return Limits(
            max_bytes=self.max_file_mb * 1024 * 1024,
            max_pages=self.max_pages,
            max_duration_s=self.max_video_minutes * 60.0,
        )


@dataclass
class Ocr:
    engine: str = "rapidocr"  # rapidocr (built in) | tesseract (needs Tesseract installed) | off
    language: str = "eng"  # Tesseract's language codes, e.g. 'heb', 'hin', 'eng+fra' (rapidocr has one model)


@dataclass
class Extraction:
    value_chars: int = 200  # longest value the model may write per field
    quote_chars: int = 400  # longest supporting quote per field
    fields_per_request: int = 1  # yes/no clauses per request (a short answer is asked alone, plainly first)
    quote_threshold: float = 0.9  # fuzzy similarity a quote needs to count as found in the source


@dataclass
class Settings:
    schema_version: int = SCHEMA_VERSION
    active_model: str = ""  # sha256 of a registered model; "" = starter model
    matter: str = ""  # the matter commands work in unless told (`folio matter use`); "" = Unfiled
    thinking: bool = False  # Qwen3.5 thinks by default; off keeps CPU answers fast
    context_cap: int = 0  # 0 = let the planner choose
    kv_cache_type: str = "auto"
    threads: int = 0  # 0 = physical cores
    max_answer_tokens: int = 1024
    state_cache_gb: int = 20  # disk kept for document snapshots (reopening is instant); 0 = none
    speculative: bool = True  # draft tokens (prompt lookup, MTP layers) and let the model check them
    draft_tokens: int = 8  # the most drafted tokens checked per step (fewer when they do not pay)
    read_ahead: bool = True  # read new documents into the local model in the background (never for a server)
    read_ahead_on_battery: bool = False  # also while the computer runs on battery
    read_ahead_threads: int = 0  # the most threads a background read uses; 0 = as many as questions
    server_url: str = ""  # OpenAI-compatible model server on the user's LAN; "" = off, no sockets
    server_model: str = ""  # the served model's name; "" = the first one the server lists
    server_timeout_s: int = 600  # longest silence accepted from the server (it reads long prompts)
    server_images: bool = True  # send scanned pages / keyframes to the server as images
    limits: FileLimits = field(default_factory=FileLimits)
    extraction: Extraction = field(default_factory=Extraction)
    ocr: Ocr = field(default_factory=Ocr)

    def validate(self) -> None:
        if self.kv_cache_type not in KV_TYPES:
            raise FolioError(f"settings: kv_cache_type must be one of {', '.join(KV_TYPES)}")
        if min(self.context_cap, self.threads, self.read_ahead_threads, self.state_cache_gb) < 0 or (
            self.max_answer_tokens <= 0
        ):
            raise FolioError(
                "settings: context_cap, threads, read_ahead_threads and state_cache_gb must be >= 0, "
                "max_answer_tokens > 0"
            )
        if self.server_url.strip() and not self.server_url.strip().startswith(("http://", "https://")):
            raise FolioError("settings: server_url must start with http:// or https://")
        if not 1 <= self.draft_tokens <= MAX_DRAFT_TOKENS:
            raise FolioError(f"settings: draft_tokens must be between 1 and {MAX_DRAFT_TOKENS}")
        if self.server_timeout_s <= 0:
            raise FolioError("settings: server_timeout_s must be > 0")
        from ingest.ocr import ENGINES

        if self.ocr.engine not in ENGINES:
            raise FolioError(f"settings: [ocr] engine must be one of {', '.join(ENGINES)}")
        if not re.fullmatch(r"[a-z_]{2,12}(\+[a-z_]{2,12})*", self.ocr.language):
            raise FolioError("settings: [ocr] language must be Tesseract language codes such as eng or eng+fra")
        ex = self.extraction
        if min(ex.value_chars, ex.quote_chars, ex.fields_per_request) < 1 or not 0.5 <= ex.quote_threshold <= 1.0:
            raise FolioError("settings: [extraction] sizes must be >= 1 and quote_threshold between 0.5 and 1")


def engine_draft_tokens(settings: Settings) -> int:
    """The engine's draft length for these settings (0: speculative decoding off)."""
    return settings.draft_tokens if settings.speculative else 0


def _from_dict(cls: type[Any], raw: dict[str, Any]) -> Any:
    """Build a settings dataclass from TOML, ignoring keys this version does not know."""
    kwargs: dict[str, Any] = {}
    defaults = cls()
    for f in dataclasses.fields(cls):
        if f.name not in raw:
            continue
        value = raw[f.name]
        default = getattr(defaults, f.name)
        if dataclasses.is_dataclass(default):
            if not isinstance(value, dict):
                raise TypeError(f"[{f.name}] must be a table")
            value = _from_dict(type(default), value)
        elif not isinstance(value, type(default)) or isinstance(value, bool) != isinstance(default, bool):
            raise TypeError(f"{f.name} must be {type(default).__name__}")
        kwargs[f.name] = value
    return cls(**kwargs)


def load_settings(path: Path) -> Settings:
    if not path.exists():
        return Settings()
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise FolioError(
            f"settings file {path} is damaged (not valid TOML: {exc}); fix it, or delete it to go back to the defaults"
        ) from exc
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise FolioError(f"settings file {path} was written by a newer Folio (schema {version}); update Folio")
    try:
        settings: Settings = _from_dict(Settings, raw)
    except TypeError as exc:
        raise FolioError(f"settings file {path} has a value of the wrong kind ({exc})") from exc
    settings.schema_version = SCHEMA_VERSION
    settings.validate()
    return settings


def save_settings(settings: Settings, path: Path, base: Settings | None = None) -> None:
    """Write `settings`. With `base` (the settings as this process last read or wrote them), only the
    values changed since then are written over the file as it is now: a value another Folio process
    saved meanwhile (`folio matter use` or `folio models use` while the window is open) is kept, not
    put back to what this process read at its start."""
    import tomli_w

    settings.validate()
    data = dataclasses.asdict(settings)
    if base is not None and path.exists():
        try:
            on_disk = dataclasses.asdict(load_settings(path))
        except FolioError:
            pass  # a damaged file: this process's settings replace it whole
        else:
            data = _changed_over(on_disk, dataclasses.asdict(base), data)
    atomic_write_text(path, tomli_w.dumps(data))


def _changed_over(on_disk: dict[str, Any], base: dict[str, Any], mine: dict[str, Any]) -> dict[str, Any]:
    """`on_disk` with every value that differs between `base` and `mine` taken from `mine` (sections
    value by value)."""
    merged = dict(on_disk)
    for key, value in mine.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict) and isinstance(on_disk.get(key), dict):
            merged[key] = _changed_over(on_disk[key], base[key], value)
        elif base.get(key) != value:
            merged[key] = value
    return merged
