"""`folio doctor`: versions, paths, hardware, model and optional tools, for support and audits."""

from __future__ import annotations

import importlib.metadata
import platform
import shutil
import sys
from dataclasses import dataclass

from app import __version__
from app.context import AppContext


@dataclass(frozen=True)
class Check:
    name: str
    value: str
    ok: bool = True


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def run_checks(ctx: AppContext) -> list[Check]:
    import psutil

    checks = [
        Check("Folio", __version__),
        Check("Python", f"{platform.python_version()} ({sys.executable})"),
        Check("OS", f"{platform.system()} {platform.release()} {platform.machine()}"),
        Check("llama-cpp-python", _version("llama-cpp-python")),
        Check("Qt (PySide6)", _version("PySide6-Essentials")),
        Check("PyMuPDF", _version("pymupdf")),
        Check("OpenCV", _version("opencv-python-headless")),
        Check("rapidocr", f"{_version('rapidocr')} (onnxruntime {_version('onnxruntime')})"),
        Check("sqlite-utils", _version("sqlite-utils")),
        Check("config dir", str(ctx.paths.config_dir)),
        Check("data dir", str(ctx.paths.data_dir)),
        Check("cache dir", str(ctx.paths.cache_dir)),
        Check("database", f"{ctx.paths.db_file} ({ctx.library.count()} documents)"),
        Check(
            "CPU",
            f"{psutil.cpu_count(logical=False)} cores / {psutil.cpu_count()} threads "
            f"({platform.processor() or platform.machine()})",
        ),
        Check(
            "RAM",
            f"{psutil.virtual_memory().total / 1024**3:.1f} GiB total, "
            f"{psutil.virtual_memory().available / 1024**3:.1f} GiB available",
        ),
    ]
    if sys.platform.startswith("linux"):
        from app.cli.x11_libraries import check_xcb

        xcb = check_xcb()
        checks.append(Check("Qt X11 libraries", xcb.line(), ok=xcb.ok))
    try:
        model = ctx.models.active(ctx.settings)
        checks.append(Check("model", f"{model.label} {model.path}"))
        if model.is_starter:
            checks.append(Check("model notice", "demo model only: add a Qwen3.5 GGUF with folio models add", ok=False))
    except Exception as exc:
        checks.append(Check("model", f"unavailable: {exc}", ok=False))
    from ingest.ocr_engines import describe

    detail, runs = describe(ctx.ocr)
    checks.append(Check("OCR", detail, ok=runs))
    xvfb = shutil.which("Xvfb")
    checks.append(Check("Xvfb", xvfb or "not found (only needed for screenshots on headless Linux)", ok=True))
    checks.append(
        Check(
            "network",
            f"server URL: {ctx.settings.server_url}"
            if ctx.settings.server_url
            else "off (no model server configured; Folio opens no sockets)",
        )
    )
    checks += socket_checks(ctx)
    return checks


def socket_checks(ctx: AppContext) -> list[Check]:
    """The sockets held by this command, its engine (started here, llama.cpp loaded) and any other
    Folio process of this user, such as an open window and its engine."""
    from app.cli.sockets import folio_processes
    from app.engine.factory import local_engine

    engine = local_engine()
    try:
        try:
            engine.gpu_devices()  # starts the engine process and loads llama.cpp with its backends
        except Exception as exc:
            return [Check("sockets", f"could not start the engine to check it: {exc}", ok=False)]
        processes = folio_processes()
    finally:
        engine.close()
    server = ctx.settings.server_url.strip()
    checks = []
    for proc in processes:
        held = proc.sockets
        outside = [s for s in held if s.leaves_machine]
        if not held:
            text = "none"
        else:
            text = "; ".join(s.describe() for s in held)
            if not outside:
                text += " (loopback only: nothing leaves this machine)"
        # Sockets to the configured model server are expected; anything else is worth a look.
        ok = not outside or bool(server)
        checks.append(Check("sockets", f"{proc.role}, pid {proc.pid}: {text}", ok=ok))
    return checks
