"""A reading planned for a question that does not fit the model's context: the requests it makes and
how each document is read (what the footer will say), under the key of everything the planning read.

Planning measures every request exactly (the engine's token count of each window, of the pages a search
ranks), which on a document of hundreds of pages takes seconds. The estimate the window offers
(app/passes/estimate.py) plans each reading to count its parts; the plan travels with the estimate, and
the run the user then chooses takes it when its key is the key the run would plan under (the same
question, conversation, selection, model, context and settings), rather than planning it again."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from app.passes.coverage import DocumentReading


@dataclass(frozen=True)
class Request:
    """One request of a question read in parts: its documents and the pages of each (None: whole)."""

    document_ids: tuple[int, ...]
    pages: Mapping[int, Collection[int]] | None
    reading: int | None  # the DocumentReading this request advances (None: all of them, one request)
    label: str  # the part, as the reply's table names it: 'pages 1-131', 'D2 Lease'
    part: str  # the part, as the model is told what it reads
    doc_index: int | None = None  # an answer about this document alone: its citations are renamed [D2 p. 3]
    tokens: int = 0  # its prompt's exact tokens, as planned


@dataclass(frozen=True)
class Planned:
    """One strategy's plan: how each document is read, and the requests that read it, in order."""

    key: str  # what it was planned from (see digest): another key, another plan
    readings: tuple[DocumentReading, ...]
    requests: tuple[Request, ...]


def digest(what: Mapping[str, Any]) -> str:
    """A key for what a result depends on (JSON-able values): equal exactly when every value is."""
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode("utf-8")).hexdigest()
