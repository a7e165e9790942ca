"""Light, dark and high contrast: follow the system's colour scheme, and keep Folio's own colours
readable in each.

Qt 6.5+ reports the system scheme (styleHints().colorScheme()) and most platform styles follow it.
Some do not (the classic Windows style stays light in dark mode); there Folio switches to the Fusion
style with a palette of its own, so text never ends up light-on-light or dark-on-dark. Folio's own
accents (errors, notes) come from accent() so they are picked for the palette in use.

When the user asked the system for high contrast (Qt 6.10+ reports it; FOLIO_HIGH_CONTRAST=1 says so
where the platform does not), Folio never replaces the platform's palette, and its own colours
(accents, badges, verdict marks, table cells) give way to the palette's text and window colours:
every mark says its meaning in words, so nothing is lost with the colours.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication, QWidget

HIGH_CONTRAST_ENV = "FOLIO_HIGH_CONTRAST"

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


def high_contrast() -> bool:
    """Has the user asked for high contrast (the system's setting, or FOLIO_HIGH_CONTRAST=1)?"""
    if os.environ.get(HIGH_CONTRAST_ENV, "").strip() in ("1", "true", "yes"):
        return True
    app = QGuiApplication.instance()
    if not isinstance(app, QGuiApplication):
        return False
    hints = app.styleHints()
    preference = hints.accessibility().contrastPreference()
    return bool(preference == Qt.ContrastPreference.HighContrast)


def accent(name: str, widget: QWidget | None = None) -> str:
    """'error' | 'warning' | 'ok' | 'muted' as a colour that reads on the current palette (in high
    contrast: the palette's own text colour)."""
    palette = widget.palette() if widget is not None else QApplication.palette()
    if high_contrast():
        return palette.color(Role.WindowText).name()
    return _ACCENTS[is_dark(palette)][name]


def badge_style() -> str:
    """A small badge in the status bar (DEMO MODEL): orange, or framed in the text colour in high contrast."""
    if high_contrast():
        return "border:1px solid palette(window-text);padding:1px 6px;border-radius:3px;"
    return "background:#b45309;color:white;padding:1px 6px;border-radius:3px;"


def banner_style(level: str) -> str:
    """The note above a page: 'info' or 'warn' (pale yellow; a framed note in high contrast)."""
    if high_contrast():
        border = "2px" if level == "warn" else "1px"
        return f"border:{border} solid palette(window-text);padding:4px 6px;border-radius:3px;"
    if level == "warn":
        return "background:#fde68a;color:#3b2f00;padding:4px 6px;border-radius:3px;"
    return "background:palette(alternate-base);padding:4px 6px;border-radius:3px;"


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
    if high_contrast():
        if app.property("folioPalette"):  # set before the user switched to high contrast: give it back
            app.setPalette(QPalette())
            app.setProperty("folioPalette", False)
        return False  # the platform's high-contrast palette is the user's choice: never replaced
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
        # Kept: PySide6 drops the accessibility hints' wrapper with a temporary style-hints wrapper,
        # and every later call to them fails.
        self._hints = app.styleHints()
        self._accessibility = self._hints.accessibility()
        self._hints.colorSchemeChanged.connect(self._changed)
        self._accessibility.contrastPreferenceChanged.connect(self._contrast_changed)
        apply_scheme(app)

    @Slot(Qt.ColorScheme)
    def _changed(self, scheme: Qt.ColorScheme) -> None:
        apply_scheme(self._app, scheme)

    @Slot(Qt.ContrastPreference)
    def _contrast_changed(self, _preference: Qt.ContrastPreference) -> None:
        apply_scheme(self._app)


def follow_system_scheme(app: QApplication) -> SchemeFollower:
    return SchemeFollower(app)
