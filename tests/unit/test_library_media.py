"""Scans, images and video stored by app.store.library: page images, keyframes, contact sheet, CLI, bad files."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.context import AppContext
from ingest import IngestError
from tests.conftest import run_folio
from tests.fixtures.media import VIDEO_CUTS, VIDEO_FPS, make_scan, make_scanned_pdf, make_video, render_text_page

TABLES = ["documents", "document_sources", "pages", "segments", "segments_fts"]


def counts(ctx: AppContext) -> dict[str, int]:
    return {t: ctx.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def test_scanned_pdf_page_image_is_retrievable(ctx: AppContext, tmp_path: Path) -> None:
    pdf = make_scanned_pdf(tmp_path / "scan.pdf", [make_scan(render_text_page(), degrees=2)], text_page="Cover text.")
    doc = ctx.library.add(pdf).document
    pages = ctx.library.pages(doc.id)
    assert [(p.number, p.scanned) for p in pages] == [(1, False), (2, True)]
    assert ctx.library.page_image(doc.id, 1) is None
    png = ctx.library.page_image(doc.id, 2)
    assert png is not None and png.startswith(b"\x89PNG")
    image_segments = [s for s in ctx.library.segments(doc.id) if s.kind == "image"]
    assert [(s.page, s.role, s.image_blob) for s in image_segments] == [(2, "page", pages[1].image_blob)]
    assert doc.token_estimate >= 1900  # the page image counts in vision tokens


def test_video_keyframes_and_contact_sheet_are_retrievable(ctx: AppContext, tmp_path: Path) -> None:
    doc = ctx.library.add(make_video(tmp_path / "clip.mp4")).document
    assert doc.kind == "video" and doc.duration_s == pytest.approx(11.0, abs=0.05)
    keys = ctx.library.keyframes(doc.id)
    assert [round(k.t_seconds * VIDEO_FPS) for k in keys] == [0, *VIDEO_CUTS]
    first = cv2.imdecode(np.frombuffer(ctx.library.blob(keys[0].image_blob), np.uint8), cv2.IMREAD_COLOR)
    assert first is not None and first.shape[1] % 32 == 0
    sheet = ctx.library.contact_sheet(doc.id)
    assert sheet is not None and sheet.startswith(b"\x89PNG")
    info = ctx.library.video_info(doc.id)
    assert info is not None and (info.width, info.height, info.frame_count) == (640, 360, 275)


def _bad(tmp_path: Path, case: str) -> Path:
    page = render_text_page(620, 877)
    path = tmp_path / f"{case.replace(' ', '_')}.bin"
    if case == "image bomb":
        _ok, png = cv2.imencode(".png", np.zeros((4, 4), np.uint8))
        data = bytearray(png.tobytes())
        data[16:24] = (60_000).to_bytes(4, "big") * 2
        path.write_bytes(bytes(data))
    elif case == "truncated jpeg":
        _ok, jpg = cv2.imencode(".jpg", make_scan(page))
        path.write_bytes(jpg.tobytes()[:5000])
    elif case == "video without frames":
        path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 5000)
    elif case == "zero-byte video":
        path = tmp_path / "empty.mp4"
        path.touch()
    elif case == "too many tiff pages":
        path = tmp_path / "many.tif"
        cv2.imwritemulti(str(path), [page] * 3)
    return path


@pytest.mark.parametrize(
    "case", ["image bomb", "truncated jpeg", "video without frames", "zero-byte video", "too many tiff pages"]
)
def test_bad_media_is_one_line_and_leaves_nothing(ctx: AppContext, tmp_path: Path, case: str) -> None:
    import dataclasses

    ctx.library.add(make_video(tmp_path / "good.mp4", frames=60))
    before = counts(ctx)
    blobs_before = sorted(ctx.paths.blobs_dir.rglob("*.png"))
    limits = dataclasses.replace(ctx.limits, max_pages=2)
    with pytest.raises(IngestError) as err:
        ctx.library.add(_bad(tmp_path, case), limits=limits)
    assert "\n" not in str(err.value) and len(str(err.value)) < 200
    assert counts(ctx) == before
    assert sorted(ctx.paths.blobs_dir.rglob("*.png")) == blobs_before


def test_cli_add_and_show_segments_for_each_kind(tmp_path: Path, folio_home: Path) -> None:
    image = tmp_path / "page.png"
    cv2.imwrite(str(image), make_scan(render_text_page(620, 877), degrees=2))
    video = make_video(tmp_path / "clip.mp4")
    code, out, err = run_folio("add", "--frames", "3", str(image), str(video))
    assert code == 0, err
    assert "added: #1 page (1 page" in out and "added: #2 clip (11 s video" in out
    code, out, err = run_folio("show", str(image), "--segments")
    assert code == 0, err
    assert "scanned pages: 1 of 1" in out and "image/page p.1 bbox=[0.0, 0.0, 620.0, 877.0]" in out
    assert "vision tokens" in out
    code, out, err = run_folio("show", "2", "--segments")
    assert code == 0, err
    assert "video: 640x360, 25.00 fps, 275 frames" in out and "3 keyframes (audio is not read)" in out
    assert out.count("image/keyframe t=") == 3 and "t=00:00:00 (0.000s)" in out
    db = sqlite3.connect(folio_home / "data" / "folio.sqlite3")
    assert db.execute("SELECT count(*) FROM segments WHERE role = 'keyframe'").fetchone()[0] == 3
