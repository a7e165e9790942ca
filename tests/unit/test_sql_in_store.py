"""SQL lives in app/store/ (and the migrations there): a table's shape changes in one room, and every
write is seen where its transaction is. This reads every other module of the app and the window."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A database call, or a string that starts like a statement.
SQL = re.compile(
    r"""\bdb\.(execute|executescript|table|query)\(|\.rows_where\(|\.fetchone\(\)|\.fetchall\(\)"""
    r"""|["'](SELECT|INSERT|UPDATE|DELETE|PRAGMA|CREATE|ALTER|DROP)\s""",
)


def _outside_store() -> list[Path]:
    files = [*sorted((REPO / "app").rglob("*.py")), *sorted((REPO / "ui").rglob("*.py"))]
    return [f for f in files if "store" not in f.relative_to(REPO).parts[:2]]


def test_no_sql_outside_app_store() -> None:
    found = [
        f"{path.relative_to(REPO)}:{n}: {line.strip()}"
        for path in _outside_store()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if SQL.search(line)
    ]
    assert not found, "SQL outside app/store/:\n" + "\n".join(found)


def test_the_check_sees_sql() -> None:
    """The pattern catches the forms SQL takes in this code base (a check that cannot fail is none)."""
    for line in (
        'rows = ctx.db.execute("SELECT 1").fetchall()',
        'self.db.table("models").rows_where("id = ?", [1])',
        '"DELETE FROM documents WHERE id = ?"',
    ):
        assert SQL.search(line), line
    assert len(_outside_store()) > 50
