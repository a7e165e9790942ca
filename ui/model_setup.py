"""The model setup page: what to bring, which Qwen3.5 size this computer runs, models already on disk,
picking files from a USB stick, and what the planner would do with the chosen model.

Everything slow (scanning other tools' stores, reading GGUF facts, the sha256 of a 5 GB file,
asking the engine process for GPUs) runs on the setup worker's thread; its signals come back to
bound methods of the dialog, which lives on the UI thread.
"""

from __future__ import annotations

import html
from pathlib import Path

from PySide6.QtCore import QObject, Qt, Signal, SignalInstance, Slot
from PySide6.QtGui import QCloseEvent, QKeyEvent
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from app.context import AppContext
from app.engine.factory import local_engine
from app.engine.session import Session
from app.engine.setup import (
    FIRST_LINES,
    WHAT_TO_BRING,
    MachineAdvice,
    ModelPlan,
    StarterStatus,
    machine_advice,
    model_plan,
    starter_status,
    tier_line,
)
from app.errors import USER_ERRORS, one_line
from app.models.discovery import FoundModel, Stores, discover, examine_file, projector_beside
from app.models.registry import ModelRecord
from ui.background import start_worker_thread
from ui.sizing import initial_size, scrolling
from ui.theme import accent
from ui.wording import sentence

GGUF_FILTER = "GGUF models (*.gguf *.GGUF);;All files (*)"
REGISTERED = "Added to Folio"


class SetupWorker(QObject):
    """Runs on its own thread with its own database connection, on the window's session when there is
    one (GPU facts come from the window's engine process: never a second one)."""

    found = Signal(list)  # list[FoundModel]
    advised = Signal(object)  # MachineAdvice
    planned = Signal(object)  # ModelPlan
    registered = Signal(object)  # ModelRecord, now the active model
    unplanned = Signal(str)  # no model to plan for (the demo model is not installed either)
    progress = Signal(str)
    failed = Signal(str)
    idle = Signal()

    def __init__(self, ctx: AppContext, stores: Stores | None = None, session: Session | None = None) -> None:
        super().__init__()
        self._base = ctx
        self._stores = stores
        self._ctx: AppContext | None = None
        # Planning is for this computer: a window that answers with a model server lends no engine.
        self._shared = session is not None and not session.engine.applies_template
        self._session = session if self._shared else None

    def _context(self) -> AppContext:
        if self._ctx is None:  # made on this thread: its SQLite connection belongs here
            self._ctx = self._base.reopen()
        return self._ctx

    def _plans(self) -> Session:
        if self._session is None:
            self._session = Session.for_context(self._base, local_engine())
        return self._session

    def _run(self, job: str, *args: object) -> None:
        try:
            getattr(self, job)(*args)
        except USER_ERRORS as exc:
            self.failed.emit(one_line(exc))
        except OSError as exc:
            self.failed.emit(f"{exc.filename or 'file'}: {exc.strerror or exc}")
        finally:
            self.idle.emit()

    @Slot()
    def discover(self) -> None:
        self._run("_discover")

    def _discover(self) -> None:
        self.progress.emit("Looking for models that Ollama, LM Studio or Hugging Face keep on this computer…")
        items = discover(self._stores)
        known = {str(m.path) for m in items}
        for record in self._context().models.all():
            if record.is_starter or record.path in known:
                continue
            mmproj = Path(record.mmproj_path) if record.mmproj_path else None
            item = examine_file(Path(record.path), REGISTERED, record.name, mmproj)
            if item is not None:
                items.append(item)
        self.found.emit(items)

    @Slot()
    def advise(self) -> None:
        self._run("_advise")

    def _advise(self) -> None:
        self.progress.emit("Measuring this computer…")
        self.advised.emit(machine_advice(self._plans().hardware()))
        self._plan(None)

    @Slot(str, str)
    def register(self, path: str, mmproj: str) -> None:
        self._run("_register", path, mmproj)

    def _register(self, path: str, mmproj: str) -> None:
        record, _ = self._context().models.add(path, mmproj=mmproj or None, progress=self._say)
        self._activate(record)

    @Slot(str)
    def install_starter(self, path: str) -> None:
        self._run("_install_starter", path)

    def _install_starter(self, path: str) -> None:
        self._say(f"Installing the demo model from {path} (checking its checksum)")
        self._context().models.install_starter(path)
        self._plan(None)

    def _activate(self, record: ModelRecord) -> None:
        # The settings object is shared with the window's contexts: the next question uses this model.
        ctx = self._context()
        ctx.settings.active_model = record.sha256
        ctx.save_settings()
        self.registered.emit(record)
        self._plan(record)

    def _plan(self, record: ModelRecord | None) -> None:
        if record is None:
            try:
                ctx = self._context()
                record = ctx.models.active(ctx.settings)
            except USER_ERRORS as exc:
                self.unplanned.emit(one_line(exc))
                self.failed.emit(one_line(exc))
                return
        self.progress.emit(f"Planning {record.label} for this computer…")
        self.planned.emit(model_plan(self._plans(), record))

    def _say(self, message: str) -> None:
        self.progress.emit(sentence(message) + "…")

    @Slot()
    def shutdown(self) -> None:
        if self._session is not None and not self._shared:
            self._session.close()
        self._session = None
        if self._ctx is not None:
            self._ctx.close()
            self._ctx = None


def _wrapped(text: str, rich: bool = False) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText if rich else Qt.TextFormat.PlainText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class ModelSetupDialog(QDialog):
    """Emits model_changed when a model became the active one."""

    model_changed = Signal()
    _discover = Signal()
    _advise = Signal()
    _register = Signal(str, str)
    _install_starter = Signal(str)

    def __init__(
        self,
        ctx: AppContext,
        parent: QWidget | None = None,
        *,
        stores: Stores | None = None,
        session: Session | None = None,
    ) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle("Model setup")
        self.setObjectName("modelSetup")
        self._busy = 0
        self._registering = False
        self._found: list[FoundModel] = []
        self.machine: MachineAdvice | None = None
        self.plan: ModelPlan | None = None

        body = QWidget()
        layout = QVBoxLayout(body)
        title = QLabel("Choose the model Folio reads with")
        font = title.font()
        font.setPointSizeF(font.pointSizeF() * 1.35)
        font.setBold(True)
        title.setFont(font)
        title.setWordWrap(True)
        layout.addWidget(title)
        self.intro = _wrapped("<br>".join(html.escape(line) for line in FIRST_LINES), rich=True)
        self.intro.setObjectName("setupIntro")
        layout.addWidget(self.intro)
        bring_box = QGroupBox("What to bring")
        bring_layout = QVBoxLayout(bring_box)
        for paragraph in WHAT_TO_BRING:
            bring_layout.addWidget(_wrapped(paragraph, rich=True))
        layout.addWidget(bring_box)

        machine_box = QGroupBox("This computer")
        machine_layout = QVBoxLayout(machine_box)
        self.machine_label = _wrapped("Measuring this computer…")
        self.tier_table = QTableWidget(0, 3)
        self.tier_table.setObjectName("tierTable")
        self.tier_table.setHorizontalHeaderLabels(["Model size", "Whole 262K-token document", "Longest document here"])
        self.tier_table.verticalHeader().setVisible(False)
        self.tier_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.tier_table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        header = self.tier_table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.recommend_label = _wrapped("")
        machine_layout.addWidget(self.machine_label)
        machine_layout.addWidget(self.tier_table)
        machine_layout.addWidget(self.recommend_label)
        layout.addWidget(machine_box)

        found_box = QGroupBox("Models already on this computer")
        found_layout = QVBoxLayout(found_box)
        self.found_label = _wrapped("Looking in the folders of Ollama, LM Studio and the Hugging Face cache…")
        self.found_list = QListWidget()
        self.found_list.setObjectName("foundModels")
        self.found_list.setWordWrap(True)
        self.found_list.itemSelectionChanged.connect(self._found_selection)
        self.use_found_button = QPushButton("Use this model")
        self.use_found_button.setEnabled(False)
        self.use_found_button.clicked.connect(self.use_found)
        found_layout.addWidget(self.found_label)
        found_layout.addWidget(self.found_list)
        found_layout.addWidget(self.use_found_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(found_box)

        pick_box = QGroupBox("From a disk or USB stick")
        pick_layout = QVBoxLayout(pick_box)
        pick_layout.addWidget(_wrapped("Folio uses the files where they are; keep the disk attached while you work."))
        self.model_edit = QLineEdit()
        self.model_edit.setObjectName("modelPath")
        self.model_edit.setPlaceholderText("Model file, e.g. Qwen3.5-9B-Q4_K_M.gguf")
        self.mmproj_edit = QLineEdit()
        self.mmproj_edit.setObjectName("mmprojPath")
        self.mmproj_edit.setPlaceholderText("Vision file (optional), e.g. mmproj-F16.gguf")
        for edit, caption, slot in (
            (self.model_edit, "Model file…", self.browse_model),
            (self.mmproj_edit, "Vision file…", self.browse_mmproj),
        ):
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            button = QPushButton(caption)
            button.clicked.connect(slot)
            row.addWidget(button)
            pick_layout.addLayout(row)
        self.add_button = QPushButton("Use these files")
        self.add_button.clicked.connect(self.use_files)
        pick_layout.addWidget(self.add_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(pick_box)

        plan_box = QGroupBox("What Folio will do with the active model")
        plan_layout = QVBoxLayout(plan_box)
        self.plan_label = _wrapped("Planning…")
        self.plan_label.setObjectName("planText")
        plan_layout.addWidget(self.plan_label)
        layout.addWidget(plan_box)

        self.starter = starter_status(ctx)
        starter_box = QGroupBox("Demo model")
        starter_layout = QVBoxLayout(starter_box)
        self.starter_label = _wrapped(self.starter.line())
        self.starter_button = QPushButton("Install the demo model…")
        self.starter_button.clicked.connect(self.install_starter)
        self.starter_button.setVisible(not self.starter.installed)
        starter_layout.addWidget(self.starter_label)
        starter_layout.addWidget(self.starter_button, 0, Qt.AlignmentFlag.AlignRight)
        layout.addWidget(starter_box)
        layout.addStretch(1)

        scroll = scrolling(body)
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)
        self.progress.setVisible(False)
        self.status_label = _wrapped("")
        self.status_label.setObjectName("setupStatus")
        self.close_button = QPushButton("Close")
        self.close_button.setDefault(True)
        self.close_button.clicked.connect(self.accept)
        bottom = QHBoxLayout()
        bottom.addWidget(self.status_label, 1)
        bottom.addWidget(self.close_button)
        outer = QVBoxLayout(self)
        outer.addWidget(scroll, 1)
        outer.addWidget(self.progress)
        outer.addLayout(bottom)
        self.resize(initial_size(self, body, 110, extra_height=self.close_button.sizeHint().height() * 3))

        self.worker = SetupWorker(ctx, stores, session)
        self._discover.connect(self.worker.discover)
        self._advise.connect(self.worker.advise)
        self._register.connect(self.worker.register)
        self._install_starter.connect(self.worker.install_starter)
        self.worker.found.connect(self._on_found)
        self.worker.advised.connect(self._on_advised)
        self.worker.planned.connect(self._on_planned)
        self.worker.registered.connect(self._on_registered)
        self.worker.unplanned.connect(self._on_unplanned)
        self.worker.progress.connect(self._on_progress)
        self.worker.failed.connect(self._on_failed)
        self.worker.idle.connect(self._on_idle)
        self.thread_ = start_worker_thread(self.worker, "folio-model-setup")
        self.destroyed.connect(self.thread_.quit)  # destroyed without closing: the thread still ends
        self._start(self._discover)
        self._start(self._advise)

    # -- jobs -------------------------------------------------------------------------------------------
    def _start(self, job: SignalInstance, *args: object) -> None:
        self._busy += 1
        self.progress.setVisible(True)
        self._set_status("")
        job.emit(*args)

    @property
    def busy(self) -> bool:
        return self._busy > 0

    def _on_idle(self) -> None:
        self._busy = max(0, self._busy - 1)
        if not self._busy:
            self._registering = False
            self.progress.setVisible(False)
            self._enable_actions(True)

    def _enable_actions(self, enabled: bool) -> None:
        for widget in (self.add_button, self.starter_button, self.close_button):
            widget.setEnabled(enabled)
        self.use_found_button.setEnabled(enabled and self._selected_found() is not None)

    def _on_progress(self, message: str) -> None:
        self.status_label.setStyleSheet("")
        self.status_label.setText(message)

    def _set_status(self, message: str, kind: str = "") -> None:
        self.status_label.setStyleSheet(f"color: {accent(kind, self)};" if kind else "")
        self.status_label.setText(message)

    def _on_failed(self, reason: str) -> None:
        self._set_status(sentence(reason), "error")

    def _on_unplanned(self, reason: str) -> None:
        self.plan = None
        self.plan_label.setTextFormat(Qt.TextFormat.PlainText)
        self.plan_label.setText(f"No model to plan for yet: {reason}")

    # -- results ----------------------------------------------------------------------------------------
    def _on_found(self, items: list[FoundModel]) -> None:
        self._found = items
        self.found_list.clear()
        usable = [m for m in items if m.usable]
        for index, model in enumerate(items):
            item = QListWidgetItem(model.describe())
            item.setData(Qt.ItemDataRole.UserRole, index)
            tip = [str(model.path)]
            if model.mmproj:
                tip.append(f"vision file: {model.mmproj}")
            tip += list(model.notes)
            item.setToolTip("\n".join(tip))
            if not model.usable:
                item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled & ~Qt.ItemFlag.ItemIsSelectable)
            self.found_list.addItem(item)
        if not items:
            self.found_label.setText(
                "None found in the folders of Ollama, LM Studio or the Hugging Face cache. Pick the files below."
            )
        else:
            qwen = sum(1 for m in usable if m.is_qwen35)
            self.found_label.setText(
                f"Found {len(items)} model{'s' if len(items) != 1 else ''} ({qwen} usable Qwen3.5). "
                "Pick one to use it where it is, without a copy."
            )
        self.found_list.setVisible(bool(items))

    def _on_advised(self, advice: MachineAdvice) -> None:
        self.machine = advice
        self.machine_label.setText(advice.summary())
        self.tier_table.setRowCount(len(advice.tiers))
        for row, tier in enumerate(advice.tiers):
            for col, text in enumerate(tier_line(tier)):
                cell = QTableWidgetItem(text)
                if tier.tier == advice.recommended:
                    font = cell.font()
                    font.setBold(True)
                    cell.setFont(font)
                self.tier_table.setItem(row, col, cell)
        self.tier_table.setFixedHeight(
            self.tier_table.horizontalHeader().height()
            + sum(self.tier_table.rowHeight(r) for r in range(len(advice.tiers)))
            + 2 * self.tier_table.frameWidth()
        )
        self.recommend_label.setText(advice.recommendation())

    def _on_planned(self, plan: ModelPlan) -> None:
        self.plan = plan
        lines = plan.lines()
        fits = plan.plan.fits
        color = accent("ok" if fits else "error", self)
        self.plan_label.setTextFormat(Qt.TextFormat.RichText)
        shown = [
            f'<span style="color:{color}">{html.escape(line)}</span>'
            if line.startswith("Does not fit")
            else html.escape(line)
            for line in lines
        ]
        self.plan_label.setText("<br>".join(shown))
        self._set_status(f"Active model: {plan.model.label}", "ok" if not plan.model.is_starter else "")

    def _on_registered(self, record: ModelRecord) -> None:
        self.model_changed.emit()
        self.starter_label.setText(f"Folio now answers with {record.label}; the demo model is no longer used.")

    # -- user actions -----------------------------------------------------------------------------------
    def _selected_found(self) -> FoundModel | None:
        items = self.found_list.selectedItems()
        return self._found[int(items[0].data(Qt.ItemDataRole.UserRole))] if items else None

    def _found_selection(self) -> None:
        self.use_found_button.setEnabled(not self._registering and self._selected_found() is not None)

    def use_found(self) -> None:
        model = self._selected_found()
        if model is not None and model.usable:
            self._begin_register(str(model.path), str(model.mmproj or ""))

    def use_files(self) -> None:
        model = self.model_edit.text().strip()
        mmproj = self.mmproj_edit.text().strip()
        if not model:
            self._set_status("Choose the model file first (a .gguf file)", "error")
            return
        for path in filter(None, (model, mmproj)):
            if not Path(path).expanduser().is_file():
                self._set_status(f"{path}: no such file", "error")
                return
        self._begin_register(model, mmproj)

    def _begin_register(self, model: str, mmproj: str) -> None:
        self._registering = True
        self._enable_actions(False)
        self._start(self._register, model, mmproj)

    def browse_model(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose the model file", self._start_dir(), GGUF_FILTER)
        if path:
            self.set_model_file(path)

    def set_model_file(self, path: str) -> None:
        """Fill in the model file, and its vision file when one lies beside it."""
        self.model_edit.setText(path)
        if not self.mmproj_edit.text().strip():
            beside = projector_beside(Path(path))
            if beside is not None:
                self.mmproj_edit.setText(str(beside))

    def browse_mmproj(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Choose the vision file (mmproj)", self._start_dir(), GGUF_FILTER)
        if path:
            self.mmproj_edit.setText(path)

    def _start_dir(self) -> str:
        current = self.model_edit.text().strip()
        return str(Path(current).parent) if current else str(Path.home())

    def install_starter(self) -> None:
        source = self.starter.found_file
        if source is None:
            path, _ = QFileDialog.getOpenFileName(
                self, f"Choose {self.starter.file_name}", str(Path.home()), GGUF_FILTER
            )
            if not path:
                return
            source = Path(path)
        self._enable_actions(False)
        self._registering = True
        self._start(self._install_starter, str(source))
        self.starter = StarterStatus(True, None, self.starter.file_name)
        self.starter_button.setVisible(False)
        self.starter_label.setText(self.starter.line())

    # -- closing ----------------------------------------------------------------------------------------
    def done(self, result: int) -> None:
        if self._registering:
            self._set_status("Please wait: Folio is still reading the model file.", "warning")
            return
        self.stop()
        super().done(result)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self._registering:
            event.ignore()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._registering:
            event.ignore()
            return
        self.stop()
        super().closeEvent(event)

    def stop(self) -> None:
        """The worker's thread ends after its current job and cleans up there (ui.background)."""
        self.thread_.quit()
