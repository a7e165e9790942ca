"""File -> Document. Pure functions: no database, no Qt."""

from __future__ import annotations

import os

# onnxruntime (the OCR engine's runtime, which `import pymupdf` also loads when PyMuPDF's layout
# package is installed) queues usage telemetry - device id, OS, CPU, memory, program path - in
# ~/.cache/Microsoft and posts it to Microsoft's collector, unless this is set before it is imported.
# Folio sends nothing anywhere: every process that reads files imports this package first.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

from ingest.document import Anchor, Document, Segment
from ingest.errors import IngestError
from ingest.limits import Limits

# Reading a file is `from ingest.load import load`, not re-exported here: every command imports this
# package (app.errors names ingest.errors), and the readers' module (sniffing, the OCR engines, the page
# memo) is 40 ms of `folio list`'s start that only adding a file needs.
__all__ = ["Anchor", "Document", "IngestError", "Limits", "Segment"]
