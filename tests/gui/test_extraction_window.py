"""An extraction run from the window, on the chat worker's engine (the real starter model): progress,
the table filling in, cancel (or closing the window, which cancels), and the engine free for questions
afterwards."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from app.extraction.templates import TemplateStore
from ui.extraction_runner import ExtractionRunDialog

pytestmark = [pytest.mark.gui, pytest.mark.e2e]


def _short_template(window, fields: int) -> str:  # type: ignore[no-untyped-def]
    names = [("Governing Law", "Which law governs."), ("Monthly Fee", "The monthly fee."), ("Notice", "Notice period.")]
    TemplateStore.for_config(window.ctx.paths.config_dir).create("short", "Short", names[:fields])
    extraction = window.ctx.settings.extraction  # shared with the workers: small answers keep it quick
    extraction.value_chars, extraction.quote_chars = 12, 40
    return "short"


def test_run_fills_the_table_live_and_frees_the_engine(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    key = _short_template(window, 2)
    window.run_extraction(key)
    dialog = window.extraction
    assert dialog is not None and dialog.isVisible() and "stop the run" in dialog.close_button.toolTip()
    assert not window.chat.send_button.isEnabled()  # one engine: questions wait for the run
    window._ask("Which law?")
    assert "busy with an extraction run" in window.statusBar().currentMessage()
    qtbot.waitUntil(lambda: dialog.finished_status is not None, timeout=180000)
    assert dialog.finished_status == "complete" and dialog.progress.value() == 2
    assert dialog.table.model.rowCount() == 1 and dialog.table.model.columnCount() == 2
    assert all(dialog.table.model.table.cell(doc.id, k) is not None for k in ("governing_law", "monthly_fee"))
    assert dialog.close_button.toolTip().endswith("stays in Work > Extraction table")
    assert dialog.close_button.isEnabled()
    # The run's last event reaches the dialog before the worker's end reaches the window (two queued
    # signals): the engine is free once the job has ended, a moment later. CI once caught it in between.
    qtbot.waitUntil(lambda: window._job is None, timeout=10000)
    assert window.chat.send_button.isEnabled()
    assert window.engine_label.text() == "engine: idle"
    assert window.engine_worker._extraction is not None
    assert window.engine_worker._extraction.session is window.engine_worker._service.session  # the same llama.cpp owner


def test_cancel_stops_the_run_and_keeps_what_is_stored(qtbot, window, contract_pdf: Path) -> None:  # type: ignore[no-untyped-def]
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    window.run_extraction(_short_template(window, 3))
    dialog = window.extraction
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=180000)
    dialog.cancel_button.click()
    qtbot.waitUntil(lambda: dialog.finished_status is not None, timeout=60000)
    assert dialog.finished_status == "cancelled" and "Cancelled" in dialog.status.text()
    stored = window.ctx.db.execute("SELECT count(*) FROM extraction_cells").fetchone()[0]
    assert 1 <= stored < 3
    assert window.ctx.db.execute("SELECT status FROM extraction_runs").fetchone()[0] == "cancelled"
    qtbot.waitUntil(lambda: window._job is None, timeout=10000)  # the worker's end follows the run's last event
    assert window.chat.send_button.isEnabled()


def _press_esc(qtbot, dialog: ExtractionRunDialog) -> None:  # type: ignore[no-untyped-def]
    """Esc in the run's window, the one the user is looking at (the main window's own Esc stops its jobs)."""
    dialog.activateWindow()
    qtbot.waitUntil(dialog.isActiveWindow, timeout=5000)
    dialog.table.setFocus()
    QTest.keyClick(dialog.table, Qt.Key.Key_Escape)


def test_esc_closes_a_running_run_and_cancels_it_keeping_what_is_stored(  # type: ignore[no-untyped-def]
    qtbot, window, contract_pdf: Path
) -> None:
    """Esc (like Close, enabled while the run goes on, or the title bar's X): the window goes, the run
    stops after the current field as Cancel does, the engine is free and the status bar says what was kept."""
    doc = window.ctx.library.add(contract_pdf).document
    window.refresh_library(select=doc.id)
    window.run_extraction(_short_template(window, 3))
    dialog = window.extraction
    assert dialog is not None and dialog.close_button.isEnabled()
    qtbot.waitUntil(lambda: dialog.progress.value() >= 1, timeout=180000)
    _press_esc(qtbot, dialog)
    assert not dialog.isVisible()
    qtbot.waitUntil(lambda: window._job is None, timeout=60000)
    assert dialog.finished_status == "cancelled"
    run_id, status = window.ctx.db.execute("SELECT id, status FROM extraction_runs").fetchone()
    stored = window.ctx.db.execute("SELECT count(*) FROM extraction_cells").fetchone()[0]
    assert status == "cancelled" and 1 <= stored < 3
    assert window.statusBar().currentMessage() == (
        f"Extraction run {run_id} stopped: {stored} of 3 fields filled and kept; running the same template on the "
        "same documents goes on from there. Work > Extraction table… shows it."
    )
    assert window.chat.send_button.isEnabled() and window.engine_label.text() == "engine: idle"


def test_closing_a_finished_run_stops_nothing(qtbot, window) -> None:  # type: ignore[no-untyped-def]
    """A run that has ended closes on Esc without asking for a stop (which would stop whatever else the
    engine is doing by then)."""
    dialog = ExtractionRunDialog(window.ctx, "Short", 1, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.finish("complete", "2 of 2 fields filled")
    stops: list[bool] = []
    dialog.cancel_requested.connect(lambda: stops.append(True))
    _press_esc(qtbot, dialog)
    assert not dialog.isVisible() and stops == []
