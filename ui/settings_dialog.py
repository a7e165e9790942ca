"""Settings: answers (thinking, drafted tokens), the engine (context cap, KV cache, threads), the model
server, how scanned pages are read (OCR engine and language), where the data lives, and clearing caches.
Values are checked by app.settings before they are saved (atomically)."""

from __future__ import annotations

import copy
import dataclasses
import os

from PySide6.QtCore import QObject, Qt, QThread, QUrl, Signal, Slot
from PySide6.QtGui import QCloseEvent, QDesktopServices, QKeyEvent
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from app.caches import cache_usage, clear_caches, human_size
from app.context import AppContext
from app.engine.factory import remote_config
from app.engine.server_check import check_server
from app.errors import USER_ERRORS, FolioError, one_line
from app.settings import MAX_DRAFT_TOKENS, Settings
from ui.background import start_worker_thread
from ui.sizing import initial_size, scrolling
from ui.theme import accent
from ui.wording import sentence

KV_CHOICES = (
    ("auto", "Automatic: the planner picks what fits"),
    ("f16", "f16: full precision, the most memory"),
    ("q8_0", "q8_0: about half the memory"),
    ("q4_0", "q4_0: about a quarter of the memory"),
)
OCR_CHOICES = (
    ("rapidocr", "Built in (rapidocr): Latin-script languages, Chinese, Japanese"),
    ("tesseract", "Tesseract, if installed: other scripts (Hebrew, Devanagari, Arabic, ...)"),
    ("off", "Off: scanned pages are read as pictures only"),
)
MAX_CONTEXT_CAP = 1_048_576
# Settings that change how the engine is made: the chat engine restarts for the next question.
ENGINE_FIELDS = ("server_url", "server_model", "context_cap", "kv_cache_type", "threads")


class ServerCheckWorker(QObject):
    checked = Signal(str)
    failed = Signal(str)

    @Slot(object)
    def check(self, settings: Settings) -> None:
        try:
            self.checked.emit(check_server(settings).line())
        except USER_ERRORS as exc:
            self.failed.emit(one_line(exc))


def _wrapped(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


class SettingsDialog(QDialog):
    """Emits saved(engine_changed) after the settings were written."""

    saved = Signal(bool)
    _check = Signal(object)

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.setWindowTitle("Settings")
        self.setObjectName("settingsDialog")
        self._checking = False
        self._check_thread: QThread | None = None
        s = ctx.settings

        answers = QGroupBox("Answers")
        answers_form = QFormLayout(answers)
        self.thinking = QCheckBox("Think before answering")
        self.thinking.setChecked(s.thinking)
        self.thinking.setToolTip("Better on hard questions, but much slower without a graphics card")
        answers_form.addRow(self.thinking)
        self.speculative = QCheckBox("Draft ahead where it makes answers faster")
        self.speculative.setChecked(s.speculative)
        self.speculative.setToolTip(
            "Guesses the next words from the documents (and from the model's MTP layers when its file has them); "
            "the model checks every guess, so answers stay exactly the same. Turns itself down when guesses miss."
        )
        self.draft_tokens = QSpinBox()
        self.draft_tokens.setRange(1, MAX_DRAFT_TOKENS)
        self.draft_tokens.setSuffix(" tokens")
        self.draft_tokens.setValue(s.draft_tokens)
        self.draft_tokens.setToolTip("The most guessed tokens checked at once; fewer are used when they do not pay")
        self.speculative.toggled.connect(self.draft_tokens.setEnabled)
        self.draft_tokens.setEnabled(s.speculative)
        answers_form.addRow(self.speculative)
        answers_form.addRow("Longest draft:", self.draft_tokens)
        self.read_ahead = QCheckBox("Read new documents ahead")
        self.read_ahead.setChecked(s.read_ahead)
        self.read_ahead.setToolTip(
            "With a local model, documents not yet read are read in the background, one at a time, so that the "
            "first question about them starts at once. A question always goes first. Never with a model server."
        )
        self.read_ahead_on_battery = QCheckBox("Also on battery")
        self.read_ahead_on_battery.setChecked(s.read_ahead_on_battery)
        self.read_ahead_on_battery.setToolTip("Reading ahead keeps the processor busy and drains the battery")
        self.read_ahead.toggled.connect(self.read_ahead_on_battery.setEnabled)
        self.read_ahead_on_battery.setEnabled(s.read_ahead)
        self.read_ahead_threads = QSpinBox()
        self.read_ahead_threads.setObjectName("readAheadThreads")
        self.read_ahead_threads.setRange(0, max(256, os.cpu_count() or 1))
        self.read_ahead_threads.setSpecialValueText("As many as questions")
        self.read_ahead_threads.setValue(s.read_ahead_threads)
        self.read_ahead_threads.setToolTip(
            "The most processor threads reading ahead uses; fewer leave the computer quicker for other work "
            "while documents are read, and reading takes longer"
        )
        self.read_ahead.toggled.connect(self.read_ahead_threads.setEnabled)
        self.read_ahead_threads.setEnabled(s.read_ahead)
        answers_form.addRow(self.read_ahead)
        answers_form.addRow(self.read_ahead_on_battery)
        answers_form.addRow("Reading ahead threads:", self.read_ahead_threads)

        engine = QGroupBox("Engine")
        engine_form = QFormLayout(engine)
        self.context_cap = QSpinBox()
        self.context_cap.setRange(0, MAX_CONTEXT_CAP)
        self.context_cap.setSingleStep(4096)
        self.context_cap.setSpecialValueText("Automatic")
        self.context_cap.setSuffix(" tokens")
        self.context_cap.setGroupSeparatorShown(True)
        self.context_cap.setValue(s.context_cap)
        self.context_cap.setToolTip("The most tokens Folio may put in the model's context (Automatic: what fits)")
        self.kv_type = QComboBox()
        for key, text in KV_CHOICES:
            self.kv_type.addItem(text, key)
        self.kv_type.setCurrentIndex(max(0, self.kv_type.findData(s.kv_cache_type)))
        self.kv_type.setToolTip("How precisely the model keeps what it has read: less precision, longer documents")
        cores = os.cpu_count() or 1
        self.threads = QSpinBox()
        self.threads.setRange(0, max(256, cores))
        self.threads.setSpecialValueText("Automatic (one per processor core)")
        self.threads.setValue(s.threads)
        self.threads.setToolTip("Processor threads for reading and answering (Automatic: one per core)")
        engine_form.addRow("Context limit:", self.context_cap)
        engine_form.addRow("KV cache:", self.kv_type)
        engine_form.addRow("Threads:", self.threads)

        scans = QGroupBox("Scanned pages and images (OCR)")
        scans_form = QFormLayout(scans)
        self.ocr_engine = QComboBox()
        self.ocr_engine.setObjectName("ocrEngine")
        for key, text in OCR_CHOICES:
            self.ocr_engine.addItem(text, key)
        self.ocr_engine.setCurrentIndex(max(0, self.ocr_engine.findData(s.ocr.engine)))
        self.ocr_engine.setToolTip("How the text of scanned pages and pictures is read when they are added")
        self.ocr_language = QLineEdit(s.ocr.language)
        self.ocr_language.setObjectName("ocrLanguage")
        self.ocr_language.setToolTip("Tesseract's language codes, joined by +: heb, hin, ara, rus, eng+fra")
        self.ocr_status = _wrapped("")
        self.ocr_status.setObjectName("ocrStatus")
        scans_form.addRow("Read text with:", self.ocr_engine)
        scans_form.addRow("Tesseract language:", self.ocr_language)
        scans_form.addRow(self.ocr_status)
        self.ocr_engine.currentIndexChanged.connect(self._ocr_changed)
        self.ocr_language.editingFinished.connect(self._ocr_changed)

        server = QGroupBox("Model server on your network")
        server_layout = QVBoxLayout(server)
        server_layout.addWidget(
            _wrapped(
                "Off unless you turn it on. When on, your documents and questions are sent to this server "
                "(vLLM, SGLang, llama-server) instead of being read on this computer."
            )
        )
        self.server_enabled = QCheckBox("Answer with a model server")
        self.server_enabled.setChecked(bool(s.server_url.strip()))
        self.server_enabled.setToolTip("Send documents and questions to the server below instead of reading them here")
        self.server_enabled.toggled.connect(self._server_toggled)
        self.server_url = QLineEdit(s.server_url)
        self.server_url.setObjectName("serverUrl")
        self.server_url.setPlaceholderText("http://192.168.1.20:8000/v1")
        self.server_model = QLineEdit(s.server_model)
        self.server_model.setPlaceholderText("the first model the server lists")
        self.check_button = QPushButton("Check connection")
        self.check_button.setToolTip("Try the server with short timeouts, as folio server check does")
        self.check_button.clicked.connect(self.check_connection)
        self.server_status = _wrapped("")
        self.server_status.setObjectName("serverStatus")
        server_form = QFormLayout()
        server_form.addRow("Server URL:", self.server_url)
        server_form.addRow("Model name:", self.server_model)
        check_row = QHBoxLayout()
        check_row.addWidget(self.server_status, 1)
        check_row.addWidget(self.check_button)
        server_layout.addWidget(self.server_enabled)
        server_layout.addLayout(server_form)
        server_layout.addLayout(check_row)

        storage = QGroupBox("Your data")
        storage_layout = QVBoxLayout(storage)
        paths = ctx.paths
        self.data_label = _wrapped(
            f"Documents and conversations: {paths.data_dir}\nCaches: {paths.cache_dir}\nSettings: {paths.settings_file}"
        )
        self.data_label.setObjectName("dataFolder")
        open_button = QPushButton("Open data folder")
        open_button.setToolTip("Show the folder of the library in the file manager")
        open_button.clicked.connect(self.open_data_folder)
        self.cache_label = _wrapped("")
        self.cache_label.setObjectName("cacheUsage")
        self.clear_button = QPushButton("Clear caches…")
        self.clear_button.setToolTip("Delete document snapshots and cached model facts, after asking; both rebuild")
        self.clear_button.clicked.connect(self.clear_caches)
        storage_layout.addWidget(self.data_label)
        storage_layout.addWidget(open_button, 0, Qt.AlignmentFlag.AlignLeft)
        cache_row = QHBoxLayout()
        cache_row.addWidget(self.cache_label, 1)
        cache_row.addWidget(self.clear_button)
        storage_layout.addLayout(cache_row)

        self.error_label = _wrapped("")
        self.error_label.setObjectName("settingsError")
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setToolTip("Check the values and save them")
        self.buttons.button(QDialogButtonBox.StandardButton.Cancel).setToolTip("Close without saving")
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

        body = QWidget()
        # A combo box asks for its longest item's width ("Built in (rapidocr): Latin-script languages,
        # ..."), which made the whole form wider than the dialog and cut off everything at its right
        # edge behind a sideways scroll bar; the open list still shows the items in full.
        for combo in [c for box in (answers, engine, scans, server, storage) for c in box.findChildren(QComboBox)]:
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        for box in (answers, engine, scans, server, storage):
            body_layout.addWidget(box)
        body_layout.addStretch(1)
        layout = QVBoxLayout(self)
        scroll = scrolling(body)
        scroll.setAccessibleName("Settings")
        scroll.setAccessibleDescription("Answers, the engine, scanned pages, the model server and your data")
        layout.addWidget(scroll, 1)
        layout.addWidget(self.error_label)
        layout.addWidget(self.buttons)
        self._server_toggled(self.server_enabled.isChecked())
        self._ocr_changed()
        self._show_cache_usage()
        self.resize(initial_size(self, body, 84, extra_height=self.buttons.sizeHint().height() * 3))

    # -- values -----------------------------------------------------------------------------------------
    def form_settings(self) -> Settings:
        """The settings as the form shows them, checked. Raises FolioError with one plain line."""
        new = copy.deepcopy(self.ctx.settings)
        new.thinking = self.thinking.isChecked()
        new.speculative = self.speculative.isChecked()
        new.draft_tokens = self.draft_tokens.value()
        new.read_ahead = self.read_ahead.isChecked()
        new.read_ahead_on_battery = self.read_ahead_on_battery.isChecked()
        new.read_ahead_threads = self.read_ahead_threads.value()
        new.context_cap = self.context_cap.value()
        new.kv_cache_type = str(self.kv_type.currentData())
        new.threads = self.threads.value()
        new.ocr = dataclasses.replace(
            new.ocr, engine=str(self.ocr_engine.currentData()), language=self.ocr_language.text().strip() or "eng"
        )
        if self.server_enabled.isChecked():
            new.server_url = self.server_url.text().strip()
            new.server_model = self.server_model.text().strip()
            if not new.server_url:
                raise FolioError("enter the model server's URL, or turn the model server off")
            if not new.server_url.startswith(("http://", "https://")):
                raise FolioError("the server URL must start with http:// or https://, e.g. http://192.168.1.20:8000/v1")
            remote_config(new)  # the URL must name a host: one plain line if it does not
        else:
            new.server_url = ""
        if 0 < new.context_cap < 4096:
            raise FolioError("the context limit must be at least 4,096 tokens (or Automatic)")
        new.validate()
        return new

    def save(self) -> None:
        try:
            new = self.form_settings()
        except USER_ERRORS as exc:
            self._error(one_line(exc))
            return
        current = self.ctx.settings
        engine_changed = any(getattr(new, f) != getattr(current, f) for f in ENGINE_FIELDS)
        before = copy.deepcopy(current)
        # In place: the window's worker contexts share this object and read it for the next question.
        for f in dataclasses.fields(Settings):
            setattr(current, f.name, getattr(new, f.name))
        try:
            self.ctx.save_settings()
        except (OSError, FolioError) as exc:
            for f in dataclasses.fields(Settings):
                setattr(current, f.name, getattr(before, f.name))
            self._error(f"could not save the settings: {one_line(exc)}")
            return
        self.saved.emit(engine_changed)
        self.accept()

    def _error(self, message: str) -> None:
        self.error_label.setStyleSheet(f"color: {accent('error', self)};")
        self.error_label.setText(sentence(message))

    # -- OCR -------------------------------------------------------------------------------------------
    def _ocr_changed(self) -> None:
        """Say what the chosen engine will do on this computer (Tesseract may not be installed)."""
        from ingest.ocr import OcrOptions
        from ingest.ocr_engines import describe

        engine = str(self.ocr_engine.currentData())
        self.ocr_language.setEnabled(engine == "tesseract")
        detail, runs = describe(OcrOptions(engine=engine, language=self.ocr_language.text().strip() or "eng"))
        self.ocr_status.setStyleSheet("" if runs else f"color: {accent('error', self)};")
        self.ocr_status.setText(sentence(detail))

    # -- model server -----------------------------------------------------------------------------------
    def _server_toggled(self, on: bool) -> None:
        for widget in (self.server_url, self.server_model, self.check_button):
            widget.setEnabled(on and not self._checking)

    def check_connection(self) -> None:
        try:
            settings = self.form_settings()
        except USER_ERRORS as exc:
            self._error(one_line(exc))
            return
        self.error_label.clear()
        if self._check_thread is None:
            self._check_worker = ServerCheckWorker()
            self._check.connect(self._check_worker.check)
            self._check_worker.checked.connect(self._on_checked)
            self._check_worker.failed.connect(self._on_check_failed)
            self._check_thread = start_worker_thread(self._check_worker, "folio-server-check", cleanup="")
            self.destroyed.connect(self._check_thread.quit)
        self._set_checking(True)
        self.server_status.setStyleSheet("")
        self.server_status.setText(f"Connecting to {settings.server_url}…")
        self._check.emit(settings)

    def _set_checking(self, checking: bool) -> None:
        self._checking = checking
        self.buttons.setEnabled(not checking)
        self._server_toggled(self.server_enabled.isChecked())

    def _on_checked(self, line: str) -> None:
        self._set_checking(False)
        self.server_status.setStyleSheet(f"color: {accent('ok', self)};")
        self.server_status.setText(sentence(line))

    def _on_check_failed(self, reason: str) -> None:
        self._set_checking(False)
        self.server_status.setStyleSheet(f"color: {accent('error', self)};")
        self.server_status.setText(sentence(reason))

    # -- data and caches ---------------------------------------------------------------------------------
    def open_data_folder(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.ctx.paths.data_dir)))

    def _show_cache_usage(self) -> None:
        usage = cache_usage(self.ctx.paths)
        self.cache_label.setText(
            "Caches: " + "; ".join(f"{u.name} {human_size(u.bytes)} ({u.files} files)" for u in usage)
        )
        self.clear_button.setEnabled(any(u.files for u in usage))

    def clear_caches(self) -> None:
        usage = cache_usage(self.ctx.paths)
        listed = "\n".join(f"• {u.name}: {u.files} files, {human_size(u.bytes)}" for u in usage)
        answer = QMessageBox.question(
            self,
            "Clear caches",
            f"Delete these caches?\n\n{listed}\n\nDocuments, conversations and models stay. The next question "
            "about each document reads it again, which takes longer once.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No,
        )
        if answer != QMessageBox.StandardButton.Yes:
            return
        try:
            freed = clear_caches(self.ctx.paths)
        except OSError as exc:
            self._error(f"could not clear the caches: {exc.strerror or exc}")
            return
        self._show_cache_usage()
        self.cache_label.setText(f"Freed {human_size(freed)}. " + self.cache_label.text())

    # -- closing ----------------------------------------------------------------------------------------
    def done(self, result: int) -> None:
        if self._checking:
            return  # the check ends within seconds (short timeouts); the buttons are disabled meanwhile
        self._stop_check_thread()
        super().done(result)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        if event.key() == Qt.Key.Key_Escape and self._checking:
            event.ignore()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:
        if self._checking:
            event.ignore()
            return
        self._stop_check_thread()
        super().closeEvent(event)

    def _stop_check_thread(self) -> None:
        if self._check_thread is not None:
            self._check_thread.quit()  # ends by itself; ui.background keeps it until then
            self._check_thread = None
