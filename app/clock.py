"""Timestamps as stored in the database: UTC, ISO 8601, second precision; and today's date."""

from __future__ import annotations

from datetime import UTC, date, datetime


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def today_iso() -> str:
    """The user's own calendar date (a matter's retention ends on a day where the user is, not in UTC)."""
    return date.today().isoformat()
