"""Documents and conversation -> chat messages, with page/time markers the model cites."""

from __future__ import annotations

import re
from dataclasses import dataclass

from inference.chat_format import ChatTemplate, Message, PromptPart, image_slot, render

_FENCE_RE = re.compile(r"<(/?)(document)", re.IGNORECASE)


@dataclass(frozen=True)
class SourceBlock:
    marker: str  # '[p. 3]', '[t 00:01:23]'
    text: str
    image: str | None = None  # a scanned page or video keyframe (image file), shown right after the marker


@dataclass(frozen=True)
class PromptDocument:
    index: int  # 1-based position in the selection
    title: str
    blocks: list[SourceBlock]


@dataclass(frozen=True)
class RenderedPrompt:
    parts: list[PromptPart]
    prefix_parts: int  # leading parts that hold the instructions + documents: the cacheable prefix

    @property
    def prefix(self) -> list[PromptPart]:
        return self.parts[: self.prefix_parts]

    @property
    def suffix(self) -> list[PromptPart]:
        return self.parts[self.prefix_parts :]


def _defuse(text: str) -> str:
    # A document must not be able to close its own fence and speak as the instructions.
    return _FENCE_RE.sub(lambda m: f"<{m.group(1)}\u200b{m.group(2)}", text)


def render_documents(documents: list[PromptDocument]) -> str:
    return _render_documents(documents)[0]


def _document_chunks(documents: list[PromptDocument]) -> tuple[list[str], tuple[str, ...]]:
    """Each document as text with image slots, and the image files in slot order."""
    chunks: list[str] = []
    images: list[str] = []
    for doc in documents:
        lines = [f'<document index="{doc.index}" title="{_defuse(doc.title).replace(chr(34), chr(39))}">']
        for block in doc.blocks:
            # Every image follows its own marker: the model can cite it, and no two images touch
            # (mtmd would otherwise merge adjacent images as if they were frames of one video).
            lines.append(block.marker)
            if block.image is not None:
                lines.append(image_slot(len(images)))
                images.append(block.image)
            if block.text:
                lines.append(_defuse(block.text))
        lines.append("</document>")
        chunks.append("\n".join(lines))
    return chunks, tuple(images)


def _render_documents(documents: list[PromptDocument]) -> tuple[str, tuple[str, ...]]:
    chunks, images = _document_chunks(documents)
    return DOCUMENT_GAP.join(chunks), images


DOCUMENT_GAP = "\n\n"


def build_messages(
    instructions: str, documents: list[PromptDocument], history: list[Message], question: str
) -> list[Message]:
    """The system message holds the instructions and the documents, the question follows.

    Where each document ends is marked (`Message.ends`): the gap between two documents opens the
    next one, so the text up to the end of document k is the same whatever follows, and the engine
    can keep the state there for a later selection that starts with the same k documents."""
    chunks, images = _document_chunks(documents)
    system = instructions.strip() + "\n\n"
    ends: list[int] = []
    for i, chunk in enumerate(chunks):
        system += (DOCUMENT_GAP if i else "") + chunk
        ends.append(len(system))
    return [Message("system", system, images=images, ends=tuple(ends)), *history, Message("user", question)]


def render_prompt(template: ChatTemplate, messages: list[Message], *, enable_thinking: bool) -> RenderedPrompt:
    parts = render(template, messages, enable_thinking=enable_thinking)
    # The prefix ends with the first content: the system message with the documents (text and images).
    end = next((i for i, p in enumerate(parts) if not p.special), len(parts) - 1) + 1
    while end < len(parts) and not parts[end].special:
        end += 1
    return RenderedPrompt(parts=parts, prefix_parts=end)
