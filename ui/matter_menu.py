"""The Matter menu: New matter…, Rename matter…, Close matter and Destroy matter….

Opening, renaming and closing a matter go through app/store/matters.py (audited, one transaction each),
as `folio matter new|rename|close` do. Destroying one asks twice, naming what goes, and then runs
`folio matter purge`'s own code (app/purge.py) on the purge worker, with its progress on screen. What
the window must do afterwards (switch to the matter, show the library again) it asks for with signals.
"""

from __future__ import annotations

from typing import cast

from PySide6.QtCore import QObject, Qt, QThread, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QInputDialog, QMainWindow, QMessageBox, QProgressDialog

from app.context import AppContext
from app.engine.session import Session
from app.errors import NotFound
from app.purge import MatterPurgeResult, PurgeProgress
from app.store.matters import Matter, Matters, change_matter, close_matter, open_matter
from ui.matter_dialog import MatterDialog, MatterFields
from ui.workers import PurgeWorker


class MatterMenu(QObject):
    matter_changed = Signal(int)  # a matter opened (to switch to), renamed or closed: its id
    destroy_requested = Signal()  # the window checks nothing else is under way, then calls destroy()
    destroyed = Signal(object)  # app.purge.MatterPurgeResult
    purge_job = Signal(str)  # to the purge worker: the matter's name

    def __init__(self, window: QMainWindow, ctx: AppContext, session: Session, thread: QThread) -> None:
        super().__init__(window)  # owned by the window (Qt parent): no Python reference back
        self.ctx = ctx
        menu = window.menuBar().addMenu("&Matter")
        self.actions: dict[str, QAction] = {}
        for key, text, tip, slot in (
            ("new", "&New matter…", "Open a matter and work in it", self.new_matter),
            ("rename", "&Rename matter…", "Rename the current matter, or change its number or retention date",
             self.rename_matter),
            ("close", "&Close matter", "Mark the current matter closed (nothing is deleted)", self.close_matter),
            ("destroy", "&Destroy matter…", "Remove the current matter's documents, conversations and tables for "
             "good, with a destruction record in the audit log", self.destroy_requested),
        ):  # fmt: skip
            action = QAction(text, window)
            action.setToolTip(tip)
            action.setStatusTip(tip)
            action.triggered.connect(slot)
            menu.addAction(action)
            self.actions[key] = action
        menu.insertSeparator(self.actions["destroy"])
        menu.aboutToShow.connect(self._update_close)
        self.progress: QProgressDialog | None = None
        # On the ingest thread: the one that writes documents, so a purge and an add never overlap.
        self.worker = PurgeWorker(ctx, session)
        self.worker.moveToThread(thread)
        self.purge_job.connect(self.worker.purge)
        self.worker.progress.connect(self._on_progress)
        self.worker.purged.connect(self._on_purged)
        self.worker.failed.connect(self._on_failed)

    @property
    def window(self) -> QMainWindow:
        return cast(QMainWindow, self.parent())

    @property
    def purging(self) -> bool:
        return self.progress is not None

    def current(self) -> Matter:
        """The window's matter; one destroyed by another Folio meanwhile (`folio matter purge` while
        the window is open) leaves the window in "Unfiled", said in the status bar."""
        matters = Matters(self.ctx.db)
        try:
            return matters.by_id(self.ctx.matter_id)
        except NotFound:
            unfiled = matters.unfiled()
            self.window.statusBar().showMessage("The matter this window was in was destroyed elsewhere; now in Unfiled")
            self.matter_changed.emit(unfiled.id)
            return unfiled

    def _update_close(self) -> None:
        closed = self.current().closed
        self.actions["close"].setText("Re&open matter" if closed else "&Close matter")

    # -- new, rename, close ----------------------------------------------------------------------
    def new_matter(self) -> MatterDialog:
        def submit(fields: MatterFields) -> None:
            matter = open_matter(
                self.ctx.audit,
                self.ctx.settings,
                fields.name,
                number=fields.number,
                description=fields.description,
                retain_until=fields.retain_until,
            )
            self.matter_changed.emit(matter.id)

        return self._open(MatterDialog(self.window, submit))

    def rename_matter(self) -> MatterDialog:
        old = self.current()

        def submit(fields: MatterFields) -> None:
            new = change_matter(
                self.ctx.audit,
                self.ctx.settings,
                old,
                name=fields.name,
                number=fields.number,
                retain_until=fields.retain_until,
            )
            self.ctx.matter_renamed(old, new)
            self.matter_changed.emit(new.id)

        return self._open(MatterDialog(self.window, submit, old))

    def _open(self, dialog: MatterDialog) -> MatterDialog:
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        return dialog

    def close_matter(self) -> None:
        """Close the current matter, or reopen it when it is closed (its work stays either way)."""
        current = self.current()
        matter = close_matter(self.ctx.audit, self.ctx.settings, current, closed=not current.closed)
        self.window.statusBar().showMessage(f"Matter {'closed' if matter.closed else 'reopened'}: {matter.name}", 5000)
        self.matter_changed.emit(matter.id)

    # -- destroy ---------------------------------------------------------------------------------
    def destroy(self) -> bool:
        """Ask twice, naming what goes; then destroy the current matter on the worker. False: not asked
        for (nothing removed)."""
        matter = self.current()
        contents = Matters(self.ctx.db).contents(matter.id)
        what = contents.words(matter.name)
        answer = QMessageBox.question(
            self.window,
            "Destroy matter",
            f"Destroy {what} for good?\n\nTheir text, search index entries, page images, stored files and model "
            "snapshots are removed, and a destruction record goes into the audit log. This cannot be undone.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return False
        typed, ok = QInputDialog.getText(self.window, "Destroy matter", f"To destroy {what}, type the matter's name:")
        if not ok or typed.strip().casefold() != matter.name.casefold():
            self.window.statusBar().showMessage("Nothing removed: the name typed was not the matter's", 8000)
            return False
        total = max(len(contents.going), 1)
        progress = QProgressDialog(f"Destroying matter {matter.name!r}…", "", 0, total, self.window)
        progress.setWindowTitle("Destroy matter")
        progress.setCancelButton(None)  # one transaction: it all goes, or (on a failure) nothing does
        progress.setWindowModality(Qt.WindowModality.WindowModal)
        progress.setMinimumDuration(0)
        progress.setAutoClose(False)
        progress.setAutoReset(False)
        progress.show()
        self.progress = progress
        self.purge_job.emit(matter.name)
        return True

    def _on_progress(self, progress: PurgeProgress) -> None:
        if self.progress is not None:
            self.progress.setMaximum(max(progress.total, 1))
            self.progress.setValue(progress.done)
            self.progress.setLabelText(progress.step)
        self.window.statusBar().showMessage(f"Destroying matter: {progress.step}")

    def _end_progress(self) -> None:
        if self.progress is not None:
            self.progress.close()
            self.progress.deleteLater()
            self.progress = None

    def _on_purged(self, result: MatterPurgeResult) -> None:
        self._end_progress()
        self.ctx.matter_destroyed(result.matter)
        self.window.statusBar().showMessage(
            f"Destroyed matter {result.matter.name!r}: {len(result.removed)} document(s), {result.conversations} "
            f"conversation(s), {result.extraction_runs} extraction table(s); {len(result.kept)} document(s) kept for "
            "other matters. Recorded in the audit log.",
            15000,
        )
        self.destroyed.emit(result)

    def _on_failed(self, reason: str) -> None:
        self._end_progress()
        self.window.statusBar().showMessage(f"Nothing removed: {reason}", 15000)
        QMessageBox.warning(self.window, "Destroy matter", f"Nothing removed: {reason}")
