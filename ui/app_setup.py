"""What the application object gets before any window: name, icon, light/dark, the error reporter."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QCoreApplication
from PySide6.QtWidgets import QApplication

from ui.app_icon import app_icon
from ui.error_hook import install_error_reporter, log_file_in
from ui.theme import follow_system_scheme


def prepare_app(app: QCoreApplication, cache_dir: Path) -> None:
    if not isinstance(app, QApplication):
        raise TypeError("Folio's window needs a QApplication")
    app.setApplicationDisplayName("Folio")  # dialogs read "Settings — Folio" where the platform adds it
    app.setDesktopFileName("folio")  # Wayland and GNOME find the icon by this name
    app.setWindowIcon(app_icon())
    follow_system_scheme(app)  # parented to the app: lives as long as it
    install_error_reporter(log_file_in(cache_dir), parent=app)
