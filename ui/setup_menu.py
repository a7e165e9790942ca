"""The Tools menu: model setup, settings and the error log; and how the window takes their changes."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

from PySide6.QtCore import QMetaObject, QObject, Qt, QUrl, Slot
from PySide6.QtGui import QAction, QDesktopServices, QKeySequence

from app.model_setup import mark_setup_seen, needs_model_setup
from ui.error_hook import log_file_in
from ui.model_setup import ModelSetupDialog
from ui.settings_dialog import SettingsDialog

if TYPE_CHECKING:
    from ui.main_window import MainWindow


class SetupMenu(QObject):
    def __init__(self, window: MainWindow) -> None:
        super().__init__(window)
        # Weak: the window owns this menu; a strong reference back would keep a closed window alive.
        self._window = weakref.ref(window)
        self.ctx = window.ctx
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

    def _win(self) -> MainWindow:
        window = self._window()
        if window is None:
            raise RuntimeError("the main window is gone")
        return window

    @Slot()
    def show_model_setup(self) -> ModelSetupDialog:
        dialog = ModelSetupDialog(self.ctx, self._win())
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

    # -- the window follows ----------------------------------------------------------------------------
    @Slot()
    def model_changed(self) -> None:
        self._win().status.show_active_model()

    @Slot(bool)
    def settings_saved(self, engine_changed: bool) -> None:
        window = self._win()
        window.status.show_network()
        window.status.show_active_model()
        if engine_changed:
            # The chat worker drops its engine after the current answer; the next question makes a new
            # one from the new settings (a model server, or the local engine with the new plan).
            QMetaObject.invokeMethod(window.chat_worker, "shutdown", Qt.ConnectionType.QueuedConnection)


def offer_model_setup(window: MainWindow) -> ModelSetupDialog | None:
    """At start: the setup page, once, while no Qwen3.5 model is chosen (the demo model works meanwhile)."""
    if not needs_model_setup(window.ctx):
        return None
    mark_setup_seen(window.ctx.paths)
    return window.setup_menu.show_model_setup()
