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
from ingest.load import Limits, load

__all__ = ["Anchor", "Document", "IngestError", "Limits", "Segment", "load"]
