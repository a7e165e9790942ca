"""Timestamps as stored in the database: UTC, ISO 8601, second precision; today's date; and a
duration in words, as an estimate says it."""

from __future__ import annotations

from datetime import UTC, date, datetime


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def today_iso() -> str:
    """The user's own calendar date (a matter's retention ends on a day where the user is, not in UTC)."""
    return date.today().isoformat()


def duration_words(seconds: float | None) -> str:
    """'40 s', '6 min', '3.5 h', '2.1 days'."""
    seconds = seconds or 0.0
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)} min"
    if seconds < 48 * 3600:
        return f"{seconds / 3600:.1f} h"
    return f"{seconds / 86400:.1f} days"
