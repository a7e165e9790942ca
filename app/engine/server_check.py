"""Check a model server before answering with it: `folio server use|check` and the settings dialog."""

from __future__ import annotations

from dataclasses import dataclass

from app.engine.factory import server_engine
from app.settings import Settings


@dataclass(frozen=True)
class ServerCheck:
    label: str  # the served model's name as the server reports it
    n_ctx: int  # its context, 0 when the server does not say

    def line(self) -> str:
        context = f", context {self.n_ctx:,} tokens" if self.n_ctx else ""
        return f"connected: {self.label}{context}"


CHECK_CONNECT_S = 5.0
CHECK_READ_S = 15.0  # listing models is quick; a long wait means the server is stuck


def check_server(settings: Settings) -> ServerCheck:
    """Connect to the configured server and list its model. Raises EngineError/FolioError (one line)."""
    from inference.events import Loaded

    settings.validate()
    engine = server_engine(settings, connect_timeout_s=CHECK_CONNECT_S, read_timeout_s=CHECK_READ_S)
    n_ctx = 0
    try:
        for event in engine.load(None):
            if isinstance(event, Loaded):
                n_ctx = event.n_ctx
        return ServerCheck(engine.label, n_ctx)
    finally:
        engine.close()
