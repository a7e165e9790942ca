"""File -> Document. Pure functions: no database, no Qt."""

from __future__ import annotations

import os
import sys

# onnxruntime (the OCR engine's runtime, which `import pymupdf` also loads when PyMuPDF's layout
# package is installed) queues usage telemetry - device id, OS, CPU, memory, program path - in
# ~/.cache/Microsoft and posts it to Microsoft's collector, unless this is set before it is imported.
# Folio sends nothing anywhere: every process that reads files imports this package first.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"


from ingest.document import Anchor, Document, Segment
from ingest.errors import IngestError
from ingest.limits import Limits

# PyMuPDF 2.0 imports its layout analyser and its LLM helpers (pymupdf4llm) whenever they are installed,
# and pip installs both with it: two ONNX models, numpy and onnxruntime loaded at `import pymupdf`, 1.7 s
# and 137 MB where PyMuPDF alone takes 0.5 s and 47 MB, in every process that opens a PDF (each `folio add`,
# the window, its file reader and its page drawer). Folio uses neither (tables are found with
# use_layout=False; Page.get_layout and to_markdown are never called) and the installers leave both out
# (packaging/folio.spec). Refused here, as PyMuPDF expects and handles, every run reads PDFs as the shipped
# app does. benchmarks/bench_ingest.py lets them in to compare table finders.
# Without them PyMuPDF prints, once per process, a line recommending the layout package the first time a
# page's tables are looked for: on `folio add`'s standard output, in the middle of its report. Its own
# switch turns that off.
os.environ.setdefault("PYMUPDF_SUGGEST_LAYOUT_ANALYZER", "0")
PYMUPDF_EXTRAS = ("pymupdf.layout", "pymupdf4llm")
for _extra in PYMUPDF_EXTRAS:
    sys.modules.setdefault(_extra, None)  # type: ignore[arg-type]

# Reading a file is `from ingest.load import load`, not re-exported here: every command imports this
# package (app.errors names ingest.errors), and the readers' module (sniffing, the OCR engines, the page
# memo) is 40 ms of `folio list`'s start that only adding a file needs.
__all__ = ["Anchor", "Document", "IngestError", "Limits", "Segment"]
