"""Light and dark: follow the system's colour scheme, and keep Folio's own colours readable in both.

Qt 6.5+ reports the system scheme (styleHints().colorScheme()) and most platform styles follow it.
Some do not (the classic Windows style stays light in dark mode); there Folio switches to the Fusion
style with a palette of its own, so text never ends up light-on-light or dark-on-dark. Folio's own
accents (errors, notes) come from accent() so they are picked for the palette in use.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QWidget

Role = QPalette.ColorRole
Group = QPalette.ColorGroup

_LIGHT = {
    Role.Window: "#f5f5f4",
    Role.WindowText: "#1c1917",
    Role.Base: "#ffffff",
    Role.AlternateBase: "#f1f5f9",
    Role.Text: "#1c1917",
    Role.Button: "#e7e5e4",
    Role.ButtonText: "#1c1917",
    Role.ToolTipBase: "#fffbeb",
    Role.ToolTipText: "#1c1917",
    Role.PlaceholderText: "#6b7280",
    Role.Highlight: "#1d4ed8",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#1d4ed8",
    Role.LinkVisited: "#6d28d9",
    Role.BrightText: "#b91c1c",
    Role.Mid: "#a8a29e",
    Role.Dark: "#78716c",
    Role.Shadow: "#44403c",
    Role.Light: "#ffffff",
    Role.Midlight: "#f5f5f4",
}
_DARK = {
    Role.Window: "#1f2125",
    Role.WindowText: "#e7e5e4",
    Role.Base: "#16181b",
    Role.AlternateBase: "#24272b",
    Role.Text: "#e7e5e4",
    Role.Button: "#2c2f34",
    Role.ButtonText: "#e7e5e4",
    Role.ToolTipBase: "#2c2f34",
    Role.ToolTipText: "#e7e5e4",
    Role.PlaceholderText: "#9ca3af",
    Role.Highlight: "#2563eb",
    Role.HighlightedText: "#ffffff",
    Role.Link: "#93c5fd",
    Role.LinkVisited: "#c4b5fd",
    Role.BrightText: "#fca5a5",
    Role.Mid: "#4b5058",
    Role.Dark: "#111315",
    Role.Shadow: "#000000",
    Role.Light: "#3a3e44",
    Role.Midlight: "#30343a",
}
# Folio's accents, per scheme: each reads at WCAG AA contrast on the palette's window colour.
_ACCENTS = {
    False: {"error": "#b91c1c", "warning": "#92400e", "ok": "#166534", "muted": "#57534e"},
    True: {"error": "#fca5a5", "warning": "#fcd34d", "ok": "#86efac", "muted": "#a8a29e"},
}


def make_palette(dark: bool) -> QPalette:
    palette = QPalette()
    for role, color in (_DARK if dark else _LIGHT).items():
        palette.setColor(role, QColor(color))
    muted = QColor(_ACCENTS[dark]["muted"])
    for role in (Role.WindowText, Role.Text, Role.ButtonText):
        palette.setColor(Group.Disabled, role, muted)
    return palette


def is_dark(palette: QPalette) -> bool:
    return palette.color(Role.Window).lightness() < 128


def accent(name: str, widget: QWidget | None = None) -> str:
    """'error' | 'warning' | 'ok' | 'muted' as a colour that reads on the current palette."""
    palette = widget.palette() if widget is not None else QApplication.palette()
    return _ACCENTS[is_dark(palette)][name]


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1..21); 4.5 is the minimum for body text."""

    def luminance(c: QColor) -> float:
        def channel(v: float) -> float:
            return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4

        return 0.2126 * channel(c.redF()) + 0.7152 * channel(c.greenF()) + 0.0722 * channel(c.blueF())

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def apply_scheme(app: QApplication, scheme: Qt.ColorScheme | None = None) -> bool:
    """Make the palette match the scheme (the system's when None). Returns True if Folio set it."""
    if scheme is None:
        scheme = app.styleHints().colorScheme()
    if scheme == Qt.ColorScheme.Unknown:
        return False  # the platform does not say: keep its palette as it is
    want_dark = scheme == Qt.ColorScheme.Dark
    if is_dark(app.palette()) == want_dark and not app.property("folioPalette"):
        return False  # the platform style already follows the scheme
    if app.style().name().lower() != "fusion":
        app.setStyle("Fusion")  # a style that draws with the palette it is given
    app.setPalette(make_palette(want_dark))
    app.setProperty("folioPalette", True)  # from now on Folio keeps the palette in step with the scheme
    return True


class SchemeFollower(QObject):
    """Re-applies the palette when the system switches between light and dark while Folio runs."""

    def __init__(self, app: QApplication) -> None:
        super().__init__(app)
        self._app = app
        app.styleHints().colorSchemeChanged.connect(self._changed)
        apply_scheme(app)

    @Slot(Qt.ColorScheme)
    def _changed(self, scheme: Qt.ColorScheme) -> None:
        apply_scheme(self._app, scheme)


def follow_system_scheme(app: QApplication) -> SchemeFollower:
    return SchemeFollower(app)
