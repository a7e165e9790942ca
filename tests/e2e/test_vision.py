"""Images through llama.cpp's mtmd for real: a tiny qwen35 text model + a tiny qwen3vl_merger mmproj.

The models have random weights, so the text they write is noise; what is checked is that the
image really goes through the projector into the same context as the document text, at the
positions llama.cpp's own reference path uses, without clearing what came before.
"""

from __future__ import annotations

import ctypes
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from inference.chat_format import ChatTemplate, Message, PromptPart, render
from inference.engine import EngineConfig, GenerateRequest, LocalEngine, Sampling
from inference.engine_process import EngineProcess
from inference.errors import EngineError, ModelFileError
from inference.events import Finished, PrefillProgress, TokenText
from inference.prompt import PromptDocument, SourceBlock, build_messages, render_prompt
from inference.vision import ImagePiece
from tests.fixtures.tiny_vision import png_image, write_tiny_mmproj, write_tiny_qwen35

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("tiny-vision")
    red = folder / "red.png"
    red.write_bytes(png_image(96, 64, (200, 30, 30), stripe=True))
    blue = folder / "blue.png"
    blue.write_bytes(png_image(96, 64, (30, 30, 200)))
    return {
        "model": str(write_tiny_qwen35(folder / "tiny-qwen35.gguf")),
        "mmproj": str(write_tiny_mmproj(folder / "tiny-mmproj.gguf")),
        "red": str(red),
        "blue": str(blue),
    }


def _config(tiny: dict[str, str], *, vision: bool = True, n_batch: int = 512) -> EngineConfig:
    return EngineConfig(
        tiny["model"], n_ctx=2048, n_threads=2, n_batch=n_batch, n_ubatch=n_batch,
        mmproj_path=tiny["mmproj"] if vision else None,
    )  # fmt: skip


def _scan_prompt(images: list[str], question: str = "What does page 2 say?") -> list[PromptPart]:
    blocks = [SourceBlock(f"[p. {i}]", f"Text printed on page {i}.", image=path) for i, path in enumerate(images, 1)]
    messages = build_messages("Answer from the document.", [PromptDocument(1, "Scan", blocks)], [], question)
    return render_prompt(ChatTemplate("chatml", thinks=True), messages, enable_thinking=False).parts


def _logits(engine: LocalEngine) -> np.ndarray:
    assert engine.ctx is not None
    return np.asarray(engine.ctx.logits())


def _read(engine: LocalEngine, parts: list[PromptPart]) -> np.ndarray:
    """A fresh reading of the prompt by the engine (nothing reused), then its next-token logits."""
    engine.forget()
    return np.asarray(engine.prompt_logits(GenerateRequest(parts, Sampling())))


def test_each_image_follows_its_marker_and_no_two_images_touch(tiny: dict[str, str]) -> None:
    parts = _scan_prompt([tiny["red"], tiny["blue"], tiny["red"]])
    image_at = [i for i, p in enumerate(parts) if p.image]
    assert len(image_at) == 3
    for page, i in enumerate(image_at, 1):
        assert not parts[i - 1].image and parts[i - 1].text.endswith(f"[p. {page}]\n")
        assert not parts[i + 1].image and parts[i + 1].text.startswith(f"\nText printed on page {page}.")
    rendered = render_prompt(
        ChatTemplate("chatml"),
        build_messages("R", [PromptDocument(1, "S", [SourceBlock("[p. 1]", "", image=tiny["red"])])], [], "q"),
        enable_thinking=False,
    )
    assert rendered.prefix[-1].text.endswith("</document>")  # the prefix holds the whole document


def test_image_goes_in_at_the_reference_positions_keeping_the_prefix(tiny: dict[str, str]) -> None:
    """Our piecewise prefill == llama.cpp's own mtmd helper over the whole prompt, logit for logit."""
    import llama_cpp
    import llama_cpp.mtmd_cpp as mtmd

    parts = _scan_prompt([tiny["red"], tiny["blue"]])
    engine = LocalEngine(_config(tiny), cancelled=lambda: False)
    try:
        assert engine.vision is not None and engine.vision.uses_mrope and engine.ctx is not None
        prompt = engine.prompt(parts, 0)
        images = [p for p in prompt.pieces if isinstance(p, ImagePiece)]
        assert len(images) == 2
        # Qwen's M-RoPE: an image fills more cells than it advances positions.
        assert all(p.n_tokens > p.n_pos > 0 for p in images)
        ours = _read(engine, parts)
        assert engine.ctx.pos_max() == len(prompt.keys) - 1  # one key per position

        # Reference: one mtmd_tokenize over the same text with media markers, evaluated from an
        # empty context by mtmd_helper_eval_chunks (what llama.cpp's own tools do).
        marker = mtmd.mtmd_default_marker().decode()
        markup: list[str] = []
        bitmaps = []
        for part in parts:
            if part.image:
                data = Path(part.image).read_bytes()
                buf = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
                bitmaps.append(mtmd.mtmd_helper_bitmap_init_from_buf(engine.vision._ctx, buf, len(data), False))
                markup.append(marker)
            else:
                markup.append(part.text)
        text = "".join(markup).encode()
        inp = mtmd.mtmd_input_text()
        inp.text, inp.text_len, inp.add_special, inp.parse_special = text, len(text), False, True
        chunks = mtmd.mtmd_input_chunks_init()
        array = (mtmd.mtmd_bitmap_p_ctypes * len(bitmaps))(*bitmaps)
        assert mtmd.mtmd_tokenize(engine.vision._ctx, chunks, ctypes.byref(inp), array, len(bitmaps)) == 0
        assert mtmd.mtmd_helper_get_n_tokens(chunks) == prompt.cells
        assert mtmd.mtmd_helper_get_n_pos(chunks) == len(prompt.keys)
        engine.forget()
        new_n_past = llama_cpp.llama_pos(0)
        status = mtmd.mtmd_helper_eval_chunks(
            engine.vision._ctx, engine.ctx.ptr, chunks, 0, 0, 512, True, ctypes.byref(new_n_past)
        )
        assert status == 0 and new_n_past.value == len(prompt.keys)
        reference = _logits(engine)
        mtmd.mtmd_input_chunks_free(chunks)
        for bitmap in bitmaps:
            mtmd.mtmd_bitmap_free(bitmap)
        np.testing.assert_allclose(ours, reference, rtol=1e-4, atol=1e-4)

        # The text before the images matters (nothing was cleared), and so does each image's content.
        for changed in (
            [PromptPart("A different preface. ", special=False), *parts],
            _scan_prompt([tiny["red"], tiny["red"]]),
        ):
            assert not np.allclose(_read(engine, changed), ours, atol=1e-3)
    finally:
        engine.close()


def test_engine_process_answers_about_images_with_progress(tiny: dict[str, str]) -> None:
    engine = EngineProcess()
    try:
        request = GenerateRequest(_scan_prompt([tiny["red"], tiny["blue"]]), Sampling(max_tokens=6))
        events = list(engine.generate(_config(tiny), request))
        progress = [e for e in events if isinstance(e, PrefillProgress)]
        stats = next(e for e in events if isinstance(e, Finished)).stats
        text_only = list(engine.generate(_config(tiny), GenerateRequest(_scan_prompt([]), Sampling(max_tokens=6))))
        text_stats = next(e for e in text_only if isinstance(e, Finished)).stats
    finally:
        engine.close()
    assert progress and progress[-1].done == progress[-1].total == stats.prompt_tokens
    # Each image costs its embedding tokens plus mtmd's <|vision_start|>/<|vision_end|>.
    assert stats.prompt_tokens > text_stats.prompt_tokens + 2 * 8
    assert 0 < stats.completion_tokens <= 6
    assert any(isinstance(e, TokenText) for e in events)


def test_images_without_a_projector_are_refused_in_one_line(tiny: dict[str, str]) -> None:
    engine = LocalEngine(_config(tiny, vision=False), cancelled=lambda: False)
    try:
        with pytest.raises(EngineError, match="no vision projector") as info:
            engine.generate(GenerateRequest(_scan_prompt([tiny["red"]]), Sampling(max_tokens=2)), lambda _e: None)
        assert "\n" not in str(info.value)
    finally:
        engine.close()


def test_missing_image_file_is_one_line(tiny: dict[str, str], tmp_path: Path) -> None:
    engine = LocalEngine(_config(tiny), cancelled=lambda: False)
    try:
        with pytest.raises(EngineError, match="missing") as info:
            engine.prompt(_scan_prompt([str(tmp_path / "gone.png")]), 0)
        assert "gone.png" in str(info.value)
        broken = tmp_path / "broken.png"
        broken.write_bytes(b"\x89PNG\r\n\x1a\n not really")
        with pytest.raises(EngineError, match="could not be decoded"):
            engine.prompt(_scan_prompt([str(broken)]), 0)
    finally:
        engine.close()


def test_projector_that_does_not_fit_the_model_is_refused(tiny: dict[str, str], shared_models_dir: Path) -> None:
    starter = str(next((shared_models_dir / "starter").glob("*.gguf")))
    config = EngineConfig(starter, n_ctx=512, n_threads=2, mmproj_path=tiny["mmproj"])  # 64-wide vs Gemma's 640
    with pytest.raises(ModelFileError, match="vision projector") as info:
        LocalEngine(config, cancelled=lambda: False)
    assert "\n" not in str(info.value)
    text_model_as_projector = EngineConfig(tiny["model"], n_ctx=512, n_threads=2, mmproj_path=tiny["model"])
    with pytest.raises(ModelFileError):
        LocalEngine(text_model_as_projector, cancelled=lambda: False)


def test_document_text_cannot_fake_an_image_slot() -> None:
    from inference.chat_format import content_parts, image_slot

    fake = "\ue002folio-image-" + "0" * 16 + "-0\ue003"  # the right shape, but not this run's nonce
    assert fake != image_slot(0) and len(fake) == len(image_slot(0))
    parts = render(
        ChatTemplate("chatml"), [Message("system", f"look {fake} here"), Message("user", "q")], enable_thinking=False
    )
    assert not any(p.image for p in parts)
    with pytest.raises(EngineError, match="do not match"):
        content_parts(Message("system", f"{image_slot(0)} only one", images=("a.png", "b.png")))


def _store_scan_and_clip(ctx: object, tiny: dict[str, str]) -> tuple[int, int]:
    """A scanned page (image + OCR text) and a video (two keyframes), as ingest hands them over."""
    from ingest.document import Anchor, Document, Page, Segment

    red, blue = Path(tiny["red"]).read_bytes(), Path(tiny["blue"]).read_bytes()
    scan = Document(
        kind="pdf", title="Scanned lease", sha256="a" * 64, source_path="/x/lease.pdf", size_bytes=1,
        mime="application/pdf",
        pages=[Page(1, "1", 612, 792, scanned=True), Page(2, "ii", 612, 792, scanned=True)],
        segments=[
            Segment("image", Anchor(page=1, label="1"), image_png=red),
            Segment("text", Anchor(page=1, label="1"), text="Rent is due monthly.", role="ocr"),
            Segment("image", Anchor(page=2, label="ii"), image_png=blue),
        ],
    )  # fmt: skip
    clip = Document(
        kind="video", title="Site visit", sha256="b" * 64, source_path="/x/visit.mp4", size_bytes=1, mime="video/mp4",
        duration_s=12.0,
        segments=[
            Segment("image", Anchor(t_seconds=0.0), image_png=blue),
            Segment("image", Anchor(t_seconds=5.0), image_png=red),
        ],
    )  # fmt: skip
    library = ctx.library  # type: ignore[attr-defined]
    return library.store(scan).document.id, library.store(clip).document.id


def test_scanned_pages_and_keyframes_reach_the_model_through_the_app(
    tiny: dict[str, str], folio_home: Path, ctx: object
) -> None:
    from app.chat import ChatService
    from app.engine.documents import prompt_documents

    scan_id, clip_id = _store_scan_and_clip(ctx, tiny)
    blocks = prompt_documents(ctx, [scan_id, clip_id], images=True)  # type: ignore[arg-type]
    assert [(b.marker, b.text, b.image is not None) for b in blocks[0].blocks] == [
        ("[p. 1]", "Rent is due monthly.", True),
        ("[p. ii]", "", True),
    ]
    assert [(b.marker, b.image is not None) for b in blocks[1].blocks] == [
        ("[t 00:00:00]", True),
        ("[t 00:00:05]", True),
    ]
    assert all(Path(b.image).read_bytes()[:4] == b"\x89PNG" for d in blocks for b in d.blocks if b.image)
    text_only = prompt_documents(ctx, [scan_id], images=False)  # type: ignore[arg-type]
    assert [(b.marker, b.text, b.image) for b in text_only[0].blocks] == [("[p. 1]", "Rent is due monthly.", None)]

    models = ctx.models  # type: ignore[attr-defined]
    record, _ = models.add(tiny["model"], mmproj=tiny["mmproj"])
    ctx.settings.active_model = record.sha256  # type: ignore[attr-defined]
    ctx.settings.max_answer_tokens = 8  # type: ignore[attr-defined]
    service = ChatService(ctx)  # type: ignore[arg-type]
    try:
        events: list[object] = []
        with_images = service.ask([scan_id, clip_id], "What is on page ii?", on_event=events.append)
        assert not [e for e in events if "left out" in getattr(e, "text", "")]
        assert service.engine.config is not None and service.engine.config.mmproj_path == tiny["mmproj"]
        pid = service.engine.pid
        # A text-only question next keeps the loaded model and projector (no reload).
        text_doc = ctx.library.store(  # type: ignore[attr-defined]
            _text_document("c" * 64, "Rent is due monthly. Notice is 30 days.")
        ).document.id
        text_answer = service.ask([text_doc], "What is the notice period?")
        assert service.engine.pid == pid and service.engine.config.mmproj_path == tiny["mmproj"]
    finally:
        service.close()
    assert with_images.status == "complete" and text_answer.status == "complete"

    # The same model without its projector: the pages are left out, and the user is told so.
    ctx.db.execute("UPDATE models SET mmproj_path = NULL, mmproj_sha256 = NULL")  # type: ignore[attr-defined]
    service = ChatService(ctx)  # type: ignore[arg-type]
    try:
        events = []
        blind = service.ask([scan_id, clip_id], "What is on page ii?", on_event=events.append)
        assert service.engine.config is not None and service.engine.config.mmproj_path is None
    finally:
        service.close()
    notes = [e.text for e in events if "left out" in getattr(e, "text", "")]  # type: ignore[attr-defined]
    assert notes == ["4 page image(s) left out (the model has no vision projector); only their text, if any, is read"]
    assert blind.status == "complete" and blind.prompt_tokens < with_images.prompt_tokens
    # Four images, each costing well over the 2 text tokens of its <|vision_start|>/<|vision_end|>.
    assert with_images.prompt_tokens > text_answer.prompt_tokens + 4 * 8


def _text_document(sha: str, text: str) -> object:
    from ingest.document import Anchor, Document, Page, Segment

    return Document(
        kind="pdf", title="Lease", sha256=sha, source_path="/x/l.pdf", size_bytes=1, mime="application/pdf",
        pages=[Page(1, "1", 612, 792)], segments=[Segment("text", Anchor(page=1), text=text)],
    )  # fmt: skip


def test_counting_from_the_header_matches_decoding(tiny: dict[str, str], tmp_path: Path) -> None:
    import cv2

    from inference.vision import estimate_image_tokens, image_size

    engine = LocalEngine(_config(tiny), cancelled=lambda: False)
    assert engine.vision is not None
    try:
        for width, height in [(96, 64), (1240, 1754), (2480, 3508), (1280, 720)]:
            png = tmp_path / f"{width}x{height}.png"
            png.write_bytes(png_image(width, height, (240, 240, 240), stripe=True))
            jpeg = tmp_path / f"{width}x{height}.jpg"
            jpeg.write_bytes(cv2.imencode(".jpg", cv2.imread(str(png)))[1].tobytes())
            for path in (png, jpeg):
                assert image_size(str(path)) == (width, height)
                counted = engine.vision.measure(str(path))  # placeholder: no pixels decoded
                with engine.vision._chunks(str(path)) as chunks:  # the real decode + resize
                    decoded = sum(int(engine.vision._mtmd.mtmd_input_chunk_get_n_tokens(c)) for c in chunks)
                assert counted.n_tokens == decoded
                assert estimate_image_tokens(str(path)) >= decoded
    finally:
        engine.close()


def test_cancel_between_images_stops_the_prefill(tiny: dict[str, str]) -> None:
    stop = {"now": False}
    engine = LocalEngine(_config(tiny, n_batch=32), cancelled=lambda: stop["now"])
    events: list[object] = []

    def emit(event: object) -> None:
        events.append(event)
        if isinstance(event, PrefillProgress):
            stop["now"] = True  # the user presses Stop as soon as reading has started

    try:
        request = GenerateRequest(_scan_prompt([tiny["red"], tiny["blue"], tiny["red"]]), Sampling(max_tokens=4))
        stats = engine.generate(request, emit)
    finally:
        engine.close()
    progress = [e for e in events if isinstance(e, PrefillProgress)]
    assert stats.stop_reason == "cancelled" and stats.completion_tokens == 0
    assert len(progress) == 1 and progress[0].done < progress[0].total
    assert not any(isinstance(e, TokenText) for e in events)


def test_scanned_pages_are_read_once_and_restored_exactly(tiny: dict[str, str], tmp_path: Path) -> None:
    """Pages as images in the documents' prefix: the snapshot (memory, then disk) equals a fresh read."""

    def request(question: str) -> GenerateRequest:
        blocks = [
            SourceBlock(f"[p. {i}]", f"Text printed on page {i}.", image=path)
            for i, path in enumerate([tiny["red"], tiny["blue"]], 1)
        ]
        messages = build_messages("Answer from the document.", [PromptDocument(1, "Scan", blocks)], [], question)
        rendered = render_prompt(ChatTemplate("chatml", thinks=True), messages, enable_thinking=False)
        return GenerateRequest(rendered.parts, Sampling(max_tokens=3), rendered.prefix_parts)

    config = EngineConfig(
        tiny["model"], n_ctx=2048, n_threads=2, mmproj_path=tiny["mmproj"],
        state_cache_dir=str(tmp_path / "states"), state_cache_bytes=1 << 30,
    )  # fmt: skip
    first, second = request("What does page 1 say?"), request("And page 2?")
    engine = LocalEngine(config, cancelled=lambda: False)
    try:
        stats = engine.generate(first, lambda _e: None)
        n_prefix = engine.prompt(first.parts, first.prefix_parts).n_prefix
        assert stats.cached_tokens == 0
        from_memory = engine.prompt_logits(second)
        assert engine.last_reuse == (n_prefix, "memory")
    finally:
        engine.close()
    reopened = LocalEngine(config, cancelled=lambda: False)
    try:
        stats = reopened.generate(second, lambda _e: None)
        assert reopened.last_reuse == (n_prefix, "disk")
        assert stats.cached_tokens == reopened.prompt(second.parts, second.prefix_parts).prefix_cells
        from_disk = reopened.prompt_logits(second)
    finally:
        reopened.close()
    fresh = LocalEngine(dataclasses.replace(config, state_cache_dir=""), cancelled=lambda: False)
    try:
        expected = fresh.prompt_logits(second)
    finally:
        fresh.close()
    assert np.array_equal(from_memory, expected) and np.array_equal(from_disk, expected)
