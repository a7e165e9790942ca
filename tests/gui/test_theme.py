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
