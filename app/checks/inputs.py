"""The key dates' inputs from an extraction table: the newest run holding the document whose template
has the fields (the built-in contract_review's), a reviewer's value before the model's.

Cells are read through load_table and the Cell fields of app.extraction, nothing else. A value the
date and duration reader cannot read ('perpetual') or reads two ways is kept as the table's word,
with nothing computed from it: the table is what the lawyer checked, so it is not overruled by a
guess from the document's sentences. A rejected cell counts as no value, and the document's own
sentences are read instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from app.checks.dates import (
    AGREEMENT_DATE,
    EFFECTIVE_DATE,
    END_DATE,
    NOTICE_PERIOD,
    RENEWAL_TERM,
    KeyInput,
    parse_date_value,
    parse_duration_value,
    show_date,
    show_duration,
)
from app.checks.text import Place

if TYPE_CHECKING:
    from app.context import AppContext
    from app.extraction.runner import ExtractionTable

# Input -> the field key of the built-in contract_review template (assets/templates/contract_review.json).
FIELDS = {
    AGREEMENT_DATE: "agreement_date",
    EFFECTIVE_DATE: "effective_date",
    END_DATE: "expiration_date",
    RENEWAL_TERM: "renewal_term",
    NOTICE_PERIOD: "notice_period_to_terminate_renewal",
}
DURATIONS = (RENEWAL_TERM, NOTICE_PERIOD)


def table_inputs(ctx: AppContext, document_id: int, unit: str) -> tuple[dict[str, KeyInput], str]:
    """The inputs the newest fitting extraction run gives this document, and where they come from
    ('extraction run 4'; 'document' when no run has the fields)."""
    from app.extraction.runner import load_table
    from app.store.checks import runs_with_document

    for run_id in runs_with_document(ctx.db, document_id):
        table = load_table(ctx, run_id, [document_id])
        keys = {f.key for f in table.fields}
        if not keys & set(FIELDS.values()):
            continue
        found = {name: value for name, key in FIELDS.items() if (value := _input(table, document_id, name, key, unit))}
        return found, f"extraction run {run_id}"
    return {}, "document"


def _input(table: ExtractionTable, document_id: int, name: str, key: str, unit: str) -> KeyInput | None:
    cell = table.cell(document_id, key)
    review = table.review(document_id, key)
    if cell is None:
        return None
    source = f"extraction run {table.run.id}"
    if review is not None:
        value = review.final_value(cell.value if cell.found else "")
        source += f" ({review.decision} by {review.reviewer})"
    elif cell.found:
        value = cell.value
    else:
        return None
    value = value.strip()
    if not value:
        return None
    place = Place(cell.page, cell.label, unit) if cell.page is not None else None
    quote = cell.quote or cell.passage
    parsed = parse_duration_value(value) if name in DURATIONS else parse_date_value(value)
    if isinstance(parsed, tuple):
        return KeyInput(name, show_duration(parsed), parsed, source, place, quote)
    if parsed is not None and not isinstance(parsed, str):
        return KeyInput(name, show_date(parsed), parsed, source, place, quote)
    why = "reads two ways" if parsed == "ambiguous" else "is no date or length Folio reads"
    return KeyInput(name, "", None, source, place, quote, f"the table's value “{value}” {why}")
