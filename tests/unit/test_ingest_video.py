"""Video through ingest.load: facts, scene-cut keyframes with timestamps, frame budget, contact sheet."""

from __future__ import annotations

import itertools
from pathlib import Path

import cv2
import numpy as np
import pytest

from ingest import IngestError
from ingest.errors import TooLarge
from ingest.limits import Limits, vision_tokens
from ingest.load import load
from tests.fixtures.media import VIDEO_CUTS, VIDEO_FPS, VIDEO_FRAMES, make_video


@pytest.fixture(scope="module")
def clip(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_video(tmp_path_factory.mktemp("video") / "cuts.mp4")


def test_keyframes_fall_on_the_scene_cuts(clip: Path) -> None:
    doc = load(clip)
    assert doc.kind == "video" and doc.mime == "video/mp4"
    assert doc.duration_s == pytest.approx(VIDEO_FRAMES / VIDEO_FPS, abs=1 / VIDEO_FPS)
    assert doc.video is not None and (doc.video.width, doc.video.height) == (640, 360)
    assert doc.video.fps == pytest.approx(VIDEO_FPS)
    times = [s.anchor.t_seconds for s in doc.segments]
    expected = [0.0] + [cut / VIDEO_FPS for cut in VIDEO_CUTS]
    assert len(times) == len(expected)
    for got, want in zip(times, expected, strict=True):
        assert got == pytest.approx(want, abs=1 / VIDEO_FPS)  # within one frame interval
    for segment in doc.segments:
        assert segment.kind == "image" and segment.role == "keyframe" and segment.anchor.page is None
        picture = cv2.imdecode(np.frombuffer(segment.image_png or b"", np.uint8), cv2.IMREAD_COLOR)
        height, width = picture.shape[:2]
        assert width % 32 == 0 and height % 32 == 0 and vision_tokens(width, height) <= Limits().frame_tokens
    # Each keyframe shows its own scene (the scenes differ in colour).
    colours = [cv2.imdecode(np.frombuffer(s.image_png or b"", np.uint8), 1).mean(axis=(0, 1)) for s in doc.segments]
    assert all(np.abs(a - b).max() > 30 for a, b in itertools.pairwise(colours))


def test_contact_sheet_is_a_picture_of_the_keyframes(clip: Path) -> None:
    doc = load(clip)
    assert doc.contact_sheet_png is not None
    sheet = cv2.imdecode(np.frombuffer(doc.contact_sheet_png, np.uint8), cv2.IMREAD_COLOR)
    assert sheet.shape[1] >= 4 * 320 and sheet.shape[0] >= 180


def test_frame_budget_bounds_the_keyframes(clip: Path) -> None:
    doc = load(clip, limits=Limits(max_keyframes=2))
    times = [s.anchor.t_seconds for s in doc.segments]
    assert len(times) == 2 and times[0] == 0.0
    assert any(t == pytest.approx(cut / VIDEO_FPS, abs=1 / VIDEO_FPS) for cut in VIDEO_CUTS for t in times[1:])


def test_video_over_the_duration_limit_is_refused(clip: Path) -> None:
    with pytest.raises(TooLarge, match="over the limit"):
        load(clip, limits=Limits(max_duration_s=5))


@pytest.mark.parametrize("case", ["garbage after header", "truncated"])
def test_videos_without_a_decodable_frame_are_refused(tmp_path: Path, clip: Path, case: str) -> None:
    bad = tmp_path / "bad.mp4"
    if case == "garbage after header":
        bad.write_bytes(b"\x00\x00\x00\x18ftypisom" + bytes(range(256)) * 40)
    else:
        bad.write_bytes(clip.read_bytes()[:2000])
    with pytest.raises(IngestError) as err:
        load(bad)
    assert "\n" not in str(err.value) and "bad.mp4" in str(err.value)


def test_720p_clip_keyframes(tmp_path: Path) -> None:
    clip = make_video(tmp_path / "hd.avi", size=(1280, 720), frames=150)
    doc = load(clip)
    assert doc.mime == "video/x-msvideo" and doc.video is not None and doc.video.height == 720
    assert [round((s.anchor.t_seconds or 0) * VIDEO_FPS) for s in doc.segments][:3] == [0, 50, 125]
