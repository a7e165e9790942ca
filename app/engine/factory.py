"""The engine factory: the local llama.cpp process, or a model server when one is configured. The only
module outside inference/ that names the engine classes.

Off by default: with no server URL in the settings Folio opens no sockets at all.
"""

from __future__ import annotations

import dataclasses
import os

from app.errors import FolioError
from app.settings import Settings
from inference.engine_api import Engine
from inference.engine_process import EngineProcess
from inference.errors import EngineError
from inference.remote import RemoteConfig, RemoteEngine

API_KEY_ENV = "FOLIO_SERVER_API_KEY"  # a secret stays out of settings.toml


def remote_config(settings: Settings) -> RemoteConfig:
    try:
        return RemoteConfig(
            url=settings.server_url.strip(),
            model=settings.server_model.strip(),
            api_key=os.environ.get(API_KEY_ENV, ""),
            read_timeout_s=float(settings.server_timeout_s),
        )
    except EngineError as exc:
        raise FolioError(f"settings: {exc}") from exc


def make_engine(settings: Settings) -> Engine:
    if not settings.server_url.strip():
        return EngineProcess()
    return RemoteEngine(remote_config(settings))


def server_engine(settings: Settings, *, connect_timeout_s: float, read_timeout_s: float) -> Engine:
    """The configured model server with shorter waits, to check it (`folio server check`, settings)."""
    config = remote_config(settings)
    return RemoteEngine(
        dataclasses.replace(
            config,
            connect_timeout_s=min(config.connect_timeout_s, connect_timeout_s),
            read_timeout_s=min(config.read_timeout_s, read_timeout_s),
        )
    )


def local_engine() -> Engine:
    """The llama.cpp engine process even when a server is configured (planning, doctor)."""
    return EngineProcess()
