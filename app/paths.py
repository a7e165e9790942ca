"""Where Folio keeps its files: platformdirs locations, or everything under FOLIO_HOME."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from common.files import private_dir

APP_NAME = "Folio"


@dataclass(frozen=True)
class Paths:
    config_dir: Path
    data_dir: Path
    cache_dir: Path

    @property
    def settings_file(self) -> Path:
        return self.config_dir / "settings.toml"

    @property
    def db_file(self) -> Path:
        return self.data_dir / "folio.sqlite3"

    @property
    def blobs_dir(self) -> Path:
        return self.data_dir / "blobs"

    @property
    def models_dir(self) -> Path:
        return self.cache_dir / "models"

    @property
    def scan_pages_dir(self) -> Path:
        """Scanned pages of a PDF being added, kept until it is stored (ingest.page_memo)."""
        return self.cache_dir / "pages"

    @property
    def state_cache_dir(self) -> Path:
        return self.cache_dir / "states"

    def ensure(self) -> Paths:
        # User-only permissions: these folders hold confidential client documents.
        for directory in (self.config_dir, self.data_dir, self.cache_dir, self.blobs_dir):
            private_dir(directory)
            if os.name == "posix":
                directory.chmod(0o700)
        return self


def default_paths() -> Paths:
    home = os.environ.get("FOLIO_HOME")
    if home:
        root = Path(home).expanduser().resolve()
        return Paths(config_dir=root / "config", data_dir=root / "data", cache_dir=root / "cache")
    import platformdirs

    return Paths(
        config_dir=Path(platformdirs.user_config_dir(APP_NAME, appauthor=False)),
        data_dir=Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)),
        cache_dir=Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False)),
    )
