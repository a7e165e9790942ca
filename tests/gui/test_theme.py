"""Light and dark: the palette follows the system scheme, text keeps its contrast in both, Folio's own
colours are picked for the palette in use."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

pytestmark = pytest.mark.gui


@pytest.fixture
def app(qapp) -> Iterator[object]:  # type: ignore[no-untyped-def]
    """The application, with its style and palette put back afterwards."""
    style, palette = qapp.style().name(), qapp.palette()
    yield qapp
    qapp.setStyle(style)
    qapp.setPalette(palette)
    qapp.setProperty("folioPalette", False)


def _pairs():  # type: ignore[no-untyped-def]
    from PySide6.QtGui import QPalette

    r = QPalette.ColorRole
    return [
        (r.WindowText, r.Window, 7.0),
        (r.Text, r.Base, 7.0),
        (r.ButtonText, r.Button, 7.0),
        (r.ToolTipText, r.ToolTipBase, 7.0),
        (r.HighlightedText, r.Highlight, 4.5),
        (r.Link, r.Base, 4.5),
        (r.PlaceholderText, r.Base, 4.5),
    ]


@pytest.mark.parametrize("dark", [False, True])
def test_forced_scheme_sets_a_readable_palette(app, dark: bool) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QPalette

    # Start from the opposite palette, as a platform style that ignores the scheme would leave it.
    from ui.theme import accent, apply_scheme, contrast, is_dark, make_palette

    app.setPalette(make_palette(not dark))
    assert apply_scheme(app, Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light)
    palette = app.palette()
    assert is_dark(palette) == dark and app.style().name().lower() == "fusion"
    for fg, bg, minimum in _pairs():
        assert contrast(palette.color(fg), palette.color(bg)) >= minimum, (fg, bg)
    window = palette.color(QPalette.ColorRole.Window)
    for name in ("error", "warning", "ok", "muted"):
        from PySide6.QtGui import QColor

        assert contrast(QColor(accent(name)), window) >= 4.5, name


def test_unknown_scheme_leaves_the_platform_palette_alone(app) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt

    from ui.theme import apply_scheme

    before = app.palette().color(app.palette().ColorRole.Window).name()
    assert not apply_scheme(app, Qt.ColorScheme.Unknown)
    assert app.palette().color(app.palette().ColorRole.Window).name() == before


def test_switching_the_system_scheme_while_running(app, qtbot) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLabel

    from ui.theme import SchemeFollower, is_dark

    follower = SchemeFollower(app)
    try:
        label = QLabel("Clause 14.2")
        qtbot.addWidget(label)
        label.show()
        hints = app.styleHints()
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Dark)  # what Qt emits when the OS switches
        assert is_dark(app.palette())
        qtbot.waitUntil(lambda: is_dark(label.palette()), timeout=2000)  # widgets follow on the next event
        hints.colorSchemeChanged.emit(Qt.ColorScheme.Light)
        assert not is_dark(app.palette())
        qtbot.waitUntil(lambda: not is_dark(label.palette()), timeout=2000)
    finally:
        follower.setParent(None)
        follower.deleteLater()


@pytest.mark.parametrize("dark", [False, True])
def test_dialog_messages_read_on_either_palette(app, qtbot, ctx, dark: bool) -> None:  # type: ignore[no-untyped-def]
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette

    from ui.settings_dialog import SettingsDialog
    from ui.theme import apply_scheme, contrast

    apply_scheme(app, Qt.ColorScheme.Dark if dark else Qt.ColorScheme.Light)
    dialog = SettingsDialog(ctx)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.server_enabled.setChecked(True)
    dialog.save()  # no URL: the one-line error
    style = dialog.error_label.styleSheet()
    color = QColor(style.removeprefix("color: ").rstrip(";"))
    assert color.isValid()
    assert contrast(color, dialog.palette().color(QPalette.ColorRole.Window)) >= 4.5
    # The dialog really paints with the palette: its background is dark exactly when the scheme is.
    image = dialog.grab().toImage()
    corner = QColor(image.pixel(2, image.height() - 2))
    assert (corner.lightness() < 128) == dark


def test_high_contrast_keeps_the_system_palette_and_folio_colours_give_way(  # type: ignore[no-untyped-def]
    app, answered, monkeypatch: pytest.MonkeyPatch
) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPalette

    from tests.fixtures.answers import store_sample_cells
    from ui.theme import HIGH_CONTRAST_ENV, accent, apply_scheme, badge_style, banner_style, high_contrast, make_palette
    from ui.transcript import UNTRUSTED, VERDICT_COLOURS

    window = answered
    apply_scheme(app, Qt.ColorScheme.Dark)  # Folio's own dark palette, as before the user switched
    assert app.property("folioPalette")
    monkeypatch.setenv(HIGH_CONTRAST_ENV, "1")  # the platform's setting, where Qt cannot read it
    assert high_contrast()
    assert not apply_scheme(app, Qt.ColorScheme.Dark)  # the system's high-contrast palette is kept
    assert not app.property("folioPalette") and app.palette() != make_palette(True)
    assert not apply_scheme(app, Qt.ColorScheme.Light)
    text = app.palette().color(QPalette.ColorRole.WindowText).name()
    assert {accent(name) for name in ("error", "warning", "ok", "muted")} == {text}
    assert "#" not in badge_style() and "#" not in banner_style("warn") and "window-text" in banner_style("warn")

    transcript = window.chat.transcript
    transcript.show_messages(transcript.messages, transcript.document_ids)  # drawn again in high contrast
    message = next(m for m in reversed(transcript.messages) if m.role == "assistant")
    fixed = {QColor(c).name() for pair in VERDICT_COLOURS.values() for c in pair} | {UNTRUSTED.name()}
    from tests.gui.conftest import char_format_at

    for href in [*transcript.claims_of(message.id), *transcript.targets_of(message.id)]:
        assert char_format_at(transcript, href).foreground().color().name() not in fixed
    faulty = [h for h, t in transcript.targets_of(message.id).items() if t.faulty]
    assert faulty and all(
        char_format_at(transcript, h).underlineStyle() == char_format_at(transcript, h).UnderlineStyle.WaveUnderline
        for h in faulty
    )  # the wave still marks a citation that does not check out
    view = window.work_menu.show_table(store_sample_cells(window.ctx, window.viewer.doc.id))
    model = view.model
    backgrounds = [model.data(model.index(0, c), Qt.ItemDataRole.BackgroundRole) for c in range(model.columnCount())]
    assert backgrounds == [None] * model.columnCount()
    view.window().close()
    monkeypatch.delenv(HIGH_CONTRAST_ENV)  # and out of high contrast, the cells have their colours again
    assert any(
        model.data(model.index(0, c), Qt.ItemDataRole.BackgroundRole) is not None for c in range(model.columnCount())
    )
