"""Changes made outside the window while it is open: `folio matter new|rename|use|close|purge`, files
filed from a terminal, another Folio window. Noticed within two seconds, and at once when Folio comes
back to the front, so the matter switcher and the library never show stale names until a restart.

Cheap enough for the UI thread, so the window never waits on it: SQLite's data_version says whether
any other connection committed since the last look (one pragma), and settings.toml's modification
time whether another Folio chose a matter; only then are the matters (a few rows) and the current
matter's document count (an index) read, and the window re-lists only what differs.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QGuiApplication

from app.context import AppContext
from app.store.db import data_version
from app.store.matters import Matters

INTERVAL_MS = 2000


class OutsideChanges(QObject):
    matters_changed = Signal()  # a matter added, renamed, closed, reopened or gone
    documents_changed = Signal()  # the current matter's documents: filed or removed
    matter_chosen = Signal(str)  # another Folio made this matter current ('' for Unfiled)

    def __init__(self, ctx: AppContext, parent: QObject) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self._version = data_version(ctx.db)
        self._seen = Matters(ctx.db).seen(ctx.matter_id)
        self._settings_mtime = self._mtime()
        self._stopped = False
        self.timer = QTimer(self)
        self.timer.setInterval(INTERVAL_MS)
        self.timer.timeout.connect(self.check)
        self.timer.start()
        app = QGuiApplication.instance()
        self._app = app if isinstance(app, QGuiApplication) else None
        if self._app is not None:
            self._app.applicationStateChanged.connect(self._on_state)

    def stop(self) -> None:
        """Before the database closes: no look after that."""
        if not self._stopped:
            self._stopped = True
            self.timer.stop()
            if self._app is not None:
                self._app.applicationStateChanged.disconnect(self._on_state)

    def _on_state(self, state: Qt.ApplicationState) -> None:
        if state == Qt.ApplicationState.ApplicationActive and not self._stopped:
            self.check()  # back from the terminal: at once, not at the next tick

    def _mtime(self) -> int:
        try:
            return self.ctx.paths.settings_file.stat().st_mtime_ns
        except OSError:
            return 0

    def check(self) -> None:
        mtime = self._mtime()
        if mtime != self._settings_mtime:
            self._settings_mtime = mtime
            chosen = self.ctx.matter_chosen_elsewhere()
            if chosen is not None:
                self.matter_chosen.emit(chosen)  # the window switches, or says why not, and re-lists
        version = data_version(self.ctx.db)
        if version == self._version:
            return
        self._version = version
        seen = Matters(self.ctx.db).seen(self.ctx.matter_id)
        before, self._seen = self._seen, seen
        if seen.matters != before.matters:
            self.matters_changed.emit()
        # A switch of the window's own since the last look counts too: what another Folio filed after it
        # would otherwise be missed, and a second listing of the same matter costs one query.
        if (seen.matter_id, seen.documents, seen.last_filed) != (before.matter_id, before.documents, before.last_filed):
            self.documents_changed.emit()
