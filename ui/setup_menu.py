"""The Tools menu: model setup, settings and the error log. It tells the window what changed through
signals (the window connects them); it knows nothing of the window's insides."""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence
from PySide6.QtWidgets import QMainWindow

from app.context import AppContext
from app.engine.session import Session
from app.engine.setup import mark_setup_seen, needs_model_setup
from ui.error_hook import log_file_in
from ui.model_setup import ModelSetupDialog
from ui.settings_dialog import SettingsDialog


class SetupMenu(QObject):
    model_changed = Signal()  # another model became the active one
    settings_saved = Signal(bool)  # True when the engine must be made anew for the next question

    def __init__(self, window: QMainWindow, ctx: AppContext, session: Session) -> None:
        super().__init__(window)  # owned by the window (Qt parent): no Python reference back to it
        self.ctx = ctx
        self.session = session
        menu = window.menuBar().addMenu("&Tools")
        self.actions: dict[str, QAction] = {}
        for key, text, shortcut, slot in (
            ("model_setup", "&Model setup…", "", self.show_model_setup),
            ("settings", "&Settings…", "Ctrl+,", self.show_settings),
            ("error_log", "Show the &error log folder", "", self.show_error_log),
        ):
            action = QAction(text, window)
            if shortcut:
                action.setShortcut(QKeySequence(shortcut))
            if key == "settings":
                action.setMenuRole(QAction.MenuRole.PreferencesRole)  # the app menu on macOS
            action.triggered.connect(slot)
            menu.addAction(action)
            self.actions[key] = action

    def _win(self) -> QMainWindow:
        return cast(QMainWindow, self.parent())

    @Slot()
    def show_model_setup(self) -> ModelSetupDialog:
        dialog = ModelSetupDialog(self.ctx, self._win(), session=self.session)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.model_changed.connect(self.model_changed)
        dialog.open()
        return dialog

    @Slot()
    def show_settings(self) -> SettingsDialog:
        dialog = SettingsDialog(self.ctx, self._win())
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.saved.connect(self.settings_saved)
        dialog.open()
        return dialog

    @Slot()
    def show_error_log(self) -> None:
        folder = log_file_in(self.ctx.paths.cache_dir).parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))

    def offer_model_setup(self) -> ModelSetupDialog | None:
        """At start: the setup page, once, while no Qwen3.5 model is chosen (the demo model works meanwhile)."""
        if not needs_model_setup(self.ctx):
            return None
        mark_setup_seen(self.ctx.paths)
        return self.show_model_setup()
