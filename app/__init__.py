"""Folio application core: settings, storage, services and the CLI. No Qt here."""

import os

# Before anything imports onnxruntime (see ingest/__init__.py): no telemetry from any Folio process.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

__version__ = "0.1.0"
