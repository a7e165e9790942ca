"""Checks that need no model: defined terms, cross-references and key dates, with their stored results.

`text.py` reads a document's body as one string with every offset's page (a comparison's blocks);
`outline.py` finds its numbered clauses and attachments; `terms.py` its definitions, their uses and
their problems; `references.py` resolves every 'Section 12.3' and 'Exhibit B'; `dates.py` reads the
agreement date, term, renewal and notice period and computes the key dates (`inputs.py` takes them
from an extraction table when one was run); `report.py` makes one list of findings of it all, and
`service.py` stores and audits it (app/store/checks.py), running again only when the document, the
rules or the table's values changed.
"""
