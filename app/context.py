"""Everything a command or a window needs: paths, settings, the database, the registries."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.errors import FolioError, LibraryGone, NotFound
from app.models.registry import ModelRegistry
from app.paths import Paths, default_paths
from app.settings import Settings, load_settings, save_settings
from app.store.audit import AuditLog, DocumentAudit
from app.store.db import open_db
from app.store.library import Library
from app.store.matters import Matter, Matters
from ingest.limits import Limits
from ingest.ocr import OcrOptions

if TYPE_CHECKING:
    from sqlite_utils import Database


@dataclass
class AppContext:
    paths: Paths
    settings: Settings
    db: Database
    # Where a few words about slow one-off work go (the CLI prints them on stderr); None: nowhere.
    notice: Callable[[str], None] | None = None
    db_inode: int = 0  # the library file this context opened (see check_still_there)
    # The matter this context works in (use_matter); None: none chosen, documents go to "Unfiled".
    chosen_matter: int | None = None
    # The settings as last read from or written to the file: save_settings writes only what changed
    # since, so another process's change (`folio matter use` while the window is open) survives.
    settings_base: Settings | None = None

    @property
    def audit(self) -> AuditLog:
        return AuditLog.in_folder(self.db, self.paths.data_dir, self.chosen_matter)

    @property
    def matter_id(self) -> int:
        """The matter this context works in: the one chosen, else "Unfiled"."""
        if self.chosen_matter is None:
            return Matters(self.db).unfiled().id
        return self.chosen_matter

    def use_matter(self, name: str | None, *, strict: bool = True) -> Matter:
        """Work in the matter named (`--matter`), else the one `folio matter use` set, else "Unfiled".
        A current matter that no longer exists is an error when `strict` (the CLI), else "Unfiled"."""
        matters = Matters(self.db)
        if name:
            matter = matters.get(name)
        elif self.settings.matter:
            found = matters.find(self.settings.matter)
            if found is None and strict:
                gone = self.settings.matter
                raise NotFound(f"the current matter {gone!r} no longer exists: choose one with folio matter use NAME")
            matter = found or matters.unfiled()
        else:
            matter = matters.unfiled()
        self.chosen_matter = matter.id
        return matter

    def make_current(self, matter: Matter) -> None:
        """Work in this matter from now on, here and in every later command or window (settings.toml, as
        `folio matter use` keeps it)."""
        self.chosen_matter = matter.id
        if self.settings.matter != matter.name:
            self.settings.matter = matter.name
            self.save_settings()

    def matter_chosen_elsewhere(self) -> str | None:
        """The matter another Folio made current (`folio matter use`, a rename or destruction of the
        current one) since this context last read or wrote settings.toml: its name ('' for none, that is
        Unfiled), or None when nothing changed or the file cannot be read now. This context's settings
        say it from then on, so a later save does not put the old one back."""
        try:
            on_disk = load_settings(self.paths.settings_file).matter
        except FolioError:
            return None  # being edited by hand, say: the next look may read it
        seen = (self.settings_base or self.settings).matter
        if on_disk == seen:
            return None
        self.settings.matter = on_disk
        if self.settings_base is not None:
            self.settings_base.matter = on_disk
        return on_disk

    def matter_renamed(self, old: Matter, new: Matter) -> None:
        """The current matter stays current under its new name."""
        if self.settings.matter.casefold() == old.name.casefold() and old.name != new.name:
            self.settings.matter = new.name
            self.save_settings()

    def matter_destroyed(self, matter: Matter) -> None:
        """A destroyed current matter leaves "Unfiled" current."""
        if self.chosen_matter == matter.id:
            self.chosen_matter = None
        if self.settings.matter.casefold() == matter.name.casefold():
            self.settings.matter = ""
            self.save_settings()

    @property
    def library(self) -> Library:
        return Library(
            self.db,
            self.paths.blobs_dir,
            audit=DocumentAudit(self.audit, self.settings),
            ocr=self.ocr,
            resume_dir=self.paths.scan_pages_dir,
            matter_id=self.chosen_matter,
        )

    @property
    def ocr(self) -> OcrOptions:
        return OcrOptions(engine=self.settings.ocr.engine, language=self.settings.ocr.language)

    @property
    def models(self) -> ModelRegistry:
        return ModelRegistry(self.db, self.paths.models_dir, self.notice)

    @property
    def limits(self) -> Limits:
        return self.settings.limits.for_ingest()

    def save_settings(self) -> None:
        save_settings(self.settings, self.paths.settings_file, self.settings_base)
        self.settings_base = copy.deepcopy(self.settings)

    def reopen(self) -> AppContext:
        """A second connection to the same files, for another thread (SQLite connections stay put)."""
        return AppContext(
            self.paths,
            self.settings,
            open_db(self.paths.db_file),
            self.notice,
            self.db_inode,
            self.chosen_matter,
            copy.deepcopy(self.settings_base),
        )

    def close(self) -> None:
        self.db.close()

    def check_still_there(self) -> None:
        """Raise if the library's file was removed or replaced while this process had it open.
        SQLite keeps writing to a deleted file without complaint, so a command whose data folder was
        removed under it would otherwise report success for work that went nowhere."""
        try:
            same = self.paths.db_file.stat().st_ino == self.db_inode
        except OSError:
            same = False
        if not same:
            raise LibraryGone(
                f"the library at {self.paths.data_dir} was removed while Folio was running: what this command "
                "did went with it; restore the folder from a backup, or start again with an empty library"
            )


def open_app(paths: Paths | None = None) -> AppContext:
    import app.errors

    paths = (paths or default_paths()).ensure()
    app.errors.library_file = paths.db_file  # for the words of a fault (app/errors.py)
    settings = load_settings(paths.settings_file)
    ctx = AppContext(paths, settings, open_db(paths.db_file), settings_base=copy.deepcopy(settings))
    ctx.db_inode = paths.db_file.stat().st_ino
    ctx.library.sweep_pending()  # page images of an add killed before its commit
    if ctx.library.trash_waiting():
        ctx.library.empty_trash()  # a purge was interrupted between its commit and deleting page images
    return ctx
