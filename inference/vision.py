"""Images into the llama.cpp context through mtmd, without throwing away what came before.

llama-cpp-python's MTMDChatHandler clears the KV cache on every call, so it cannot serve a long
document asked many times. Here mtmd only turns each image into an embedding chunk; the engine
keeps its own context and evaluates text and images in order at the right positions. Images are
tokenized one at a time, right before they are evaluated, so a 300-page scan never holds more
than one preprocessed page in memory. Runs inside the engine process; llama_cpp is imported lazily.
"""

from __future__ import annotations

import ctypes
import math
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from inference.errors import EngineError, ModelFileError


@dataclass(frozen=True)
class ImagePiece:
    """One image as the model sees it: mtmd's chunks (begin marker, embeddings, end marker)."""

    path: str
    n_tokens: int  # KV cells the image fills
    n_pos: int  # positions it advances; with M-RoPE (Qwen) an image uses fewer positions than cells


Piece = list[int] | ImagePiece


@dataclass(frozen=True)
class PreparedPrompt:
    """A prompt ready to evaluate: runs of text tokens and images, in order."""

    pieces: list[Piece]
    ends: tuple[int, ...] = ()  # positions right after each part marked `ends_document` (a document ends)

    @property
    def n_tokens(self) -> int:
        return sum(p.n_tokens if isinstance(p, ImagePiece) else len(p) for p in self.pieces)

    @property
    def n_pos(self) -> int:
        """Where the next token goes after this prompt (equals n_tokens for text-only prompts)."""
        return sum(p.n_pos if isinstance(p, ImagePiece) else len(p) for p in self.pieces)

    @property
    def images(self) -> int:
        return sum(isinstance(p, ImagePiece) for p in self.pieces)


class Vision:
    """An mtmd context bound to one loaded text model."""

    def __init__(self, model: Any, mmproj_path: str, *, n_threads: int, flash_attn: bool, log_callback: Any) -> None:
        """model: the loaded text model (a llama_model pointer) the projector feeds."""
        import llama_cpp
        import llama_cpp.mtmd_cpp as mtmd

        self._mtmd = mtmd
        self._sizes: dict[tuple[str, int, int], ImagePiece] = {}
        if log_callback is not None:
            # Route clip/mtmd logging through the engine's capture: errors explain failures, the
            # rest (per-image timings, tensor lists) stays off the terminal.
            mtmd.mtmd_log_set(log_callback, ctypes.c_void_p(0))
            mtmd.mtmd_helper_log_set(log_callback, ctypes.c_void_p(0))
        params = mtmd.mtmd_context_params_default()
        params.use_gpu = bool(llama_cpp.llama_supports_gpu_offload())
        params.print_timings = False
        params.n_threads = n_threads
        params.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        path = Path(mmproj_path)
        if not path.is_file():
            raise ModelFileError(f"the vision projector {path.name} is missing")
        ctx = mtmd.mtmd_init_from_file(os.fsencode(path), model, params)
        if not ctx:
            raise ModelFileError(
                f"llama.cpp could not load the vision projector {path.name} for this model "
                "(is it the mmproj that belongs to this model?)"
            )
        self._ctx = ctx
        if not mtmd.mtmd_support_vision(ctx):
            self.close()
            raise ModelFileError(f"{path.name} is not a vision projector (no image encoder)")
        self.uses_mrope = bool(mtmd.mtmd_decode_use_mrope(ctx))

    def close(self) -> None:
        if self._ctx:
            self._mtmd.mtmd_free(self._ctx)
            self._ctx = None

    # -- tokenizing ------------------------------------------------------------------------------
    @contextmanager
    def _chunks(self, path: str, *, count_only: bool = False) -> Iterator[list[Any]]:
        """mtmd's chunks for one image, freed on exit.

        count_only: a placeholder bitmap of the image's size (read from its header), which mtmd
        tokenizes without decoding or resizing any pixels: exact counts at almost no cost.
        """
        mtmd = self._mtmd
        name = Path(path).name
        size = image_size(path) if count_only else None
        if size is not None:
            bitmap = mtmd.mtmd_bitmap_init(size[0], size[1], None)
        else:
            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise EngineError(f"an image of the document is missing or unreadable ({name})") from exc
            buffer = (ctypes.c_uint8 * len(data)).from_buffer_copy(data)
            bitmap = mtmd.mtmd_helper_bitmap_init_from_buf(self._ctx, buffer, len(data), False)
        if not bitmap:
            raise EngineError(f"an image of the document could not be decoded ({name})")
        chunks = mtmd.mtmd_input_chunks_init()
        try:
            part = mtmd.mtmd_input_part()
            part.text = None
            part.bitmap = bitmap
            parts = (ctypes.POINTER(mtmd.mtmd_input_part) * 1)(ctypes.pointer(part))
            # add_special=False: BOS, if any, belongs to the start of the whole prompt, not here.
            status = mtmd.mtmd_tokenize_from_parts(self._ctx, chunks, parts, 1, False)
            if status != 0:
                raise EngineError(f"the vision projector could not prepare an image ({name}, error {status})")
            yield [mtmd.mtmd_input_chunks_get(chunks, i) for i in range(mtmd.mtmd_input_chunks_size(chunks))]
        finally:
            mtmd.mtmd_input_chunks_free(chunks)
            mtmd.mtmd_bitmap_free(bitmap)

    def measure(self, path: str) -> ImagePiece:
        """How many cells and positions an image takes (remembered per file version)."""
        try:
            st = os.stat(path)
            key = (path, st.st_size, st.st_mtime_ns)
        except OSError as exc:
            raise EngineError(f"an image of the document is missing ({Path(path).name})") from exc
        known = self._sizes.get(key)
        if known is not None:
            return known
        mtmd = self._mtmd
        with self._chunks(path, count_only=True) as chunks:
            n_tokens = sum(int(mtmd.mtmd_input_chunk_get_n_tokens(c)) for c in chunks)
            n_pos = sum(int(mtmd.mtmd_input_chunk_get_n_pos(c)) for c in chunks)
        piece = ImagePiece(path, n_tokens, n_pos)
        self._sizes[key] = piece
        return piece

    # -- evaluating ------------------------------------------------------------------------------
    def evaluate(self, piece: ImagePiece, n_past: int, n_batch: int, *, logits_last: bool, lctx: Any) -> int:
        """Encode the image and decode it into the context `lctx` at n_past; returns the next position."""
        import llama_cpp

        mtmd = self._mtmd
        with self._chunks(piece.path) as chunks:
            for i, chunk in enumerate(chunks):
                # mtmd's text path adds to *new_n_past, its image path overwrites it: start from n_past.
                new_n_past = llama_cpp.llama_pos(n_past)
                last = logits_last and i == len(chunks) - 1
                status = mtmd.mtmd_helper_eval_chunk_single(
                    self._ctx, lctx, chunk, n_past, 0, n_batch, last, ctypes.byref(new_n_past)
                )
                if status != 0:
                    raise VisionEvalError(status)
                n_past = int(new_n_past.value)
        return n_past


class VisionEvalError(EngineError):
    def __init__(self, status: int) -> None:
        super().__init__(f"llama.cpp failed while reading an image (error {status})")
        self.status = status


def prepare(
    parts: list[Any], tokenize: Callable[[str, bool, bool], list[int]], vision: Vision | None
) -> PreparedPrompt:
    """Turn prompt parts into text-token runs and measured images (no image is kept in memory)."""
    pieces: list[Piece] = []
    run: list[int] = []
    ends: list[int] = []
    pos = 0  # positions taken so far (an image advances n_pos)
    for i, part in enumerate(parts):
        if part.image is None:
            tokens = tokenize(part.text, i == 0, part.special)
            run += tokens
            pos += len(tokens)
        else:
            if vision is None:
                raise EngineError(
                    "the prompt has page images but the model has no vision projector; "
                    "register its mmproj (folio models add MODEL.gguf --mmproj MMPROJ.gguf) or use text only"
                )
            if run:
                pieces.append(run)
                run = []
            image = vision.measure(part.image)
            pieces.append(image)
            pos += image.n_pos
        if getattr(part, "ends_document", False):
            ends.append(pos)
    if run:
        pieces.append(run)
    return PreparedPrompt(pieces, tuple(ends))


def has_images(parts: list[Any]) -> bool:
    return any(getattr(p, "image", None) for p in parts)


# Qwen3.5's projector: 16 px patches merged 2x2 -> one token per 32x32 px, 8 to 4096 per image.
_PX_PER_TOKEN_SIDE = 32
_MIN_IMAGE_TOKENS, _MAX_IMAGE_TOKENS = 8, 4096
_UNKNOWN_IMAGE_TOKENS = 1024


def estimate_image_tokens(path: str) -> int:
    """A cheap estimate (from the file header, no decoding) for sizing the context before loading.

    The engine counts exactly with the projector; this only has to be close and not low.
    """
    size = image_size(path)
    if size is None:
        return _UNKNOWN_IMAGE_TOKENS
    width, height = size
    side = _PX_PER_TOKEN_SIDE
    area = max(1, width * height)
    if area < _MIN_IMAGE_TOKENS * side * side:  # small images are scaled up to the minimum
        scale = math.sqrt(_MIN_IMAGE_TOKENS * side * side / area)
        width, height = math.ceil(width * scale), math.ceil(height * scale)
    tokens = -(-width // side) * -(-height // side)
    return min(max(tokens, _MIN_IMAGE_TOKENS), _MAX_IMAGE_TOKENS) + 2  # + begin/end markers


def image_size(path: str) -> tuple[int, int] | None:
    """Width and height of a PNG or JPEG file from its header; None when unreadable."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(64 * 1024)
    except OSError:
        return None
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:2] == b"\xff\xd8":
        i = 2
        while i + 9 < len(head):
            if head[i] != 0xFF:
                i += 1
                continue
            marker = head[i + 1]
            length = int.from_bytes(head[i + 2 : i + 4], "big")
            if marker in (0xC0, 0xC1, 0xC2):  # start of frame: height, then width
                return int.from_bytes(head[i + 7 : i + 9], "big"), int.from_bytes(head[i + 5 : i + 7], "big")
            i += 2 + length
    return None
