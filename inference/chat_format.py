"""Render a conversation through the model's own chat template, keeping user content apart.

The template is trusted markup; every message content (documents, questions, past answers) is
untrusted. Rendering puts a sentinel where each content goes, then splits the rendered text so
content is tokenized with special-token parsing OFF: a PDF containing '<|im_start|>' stays text.
"""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from inference.errors import EngineError

_SENTINEL = "\ue000folio-content-{}\ue001"
_SENTINEL_RE = re.compile("\ue000folio-content-(\\d+)\ue001")
# Image slots carry a per-process nonce, so text inside a document cannot fake one.
_IMAGE_NONCE = secrets.token_hex(8)
_IMAGE_SLOT_RE = re.compile(f"\ue002folio-image-{_IMAGE_NONCE}-(\\d+)\ue003")


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str
    thinking: str = ""
    images: tuple[str, ...] = ()  # image files; image i goes where image_slot(i) stands in content
    # Offsets in content where a document ends (the system message of a question): the text is cut
    # there into parts tokenized apart, so the tokens up to each end do not depend on what follows
    # and the state there can be kept and reused by a selection that starts with the same documents.
    ends: tuple[int, ...] = ()


@dataclass(frozen=True)
class PromptPart:
    text: str
    special: bool  # True: template markup (special tokens parsed); False: untrusted content
    image: str | None = None  # an image file (PNG/JPEG) fed through the vision projector; text is ''
    ends_document: bool = False  # a document ends with this part (Message.ends): a state worth keeping


def image_slot(index: int) -> str:
    """The place holder for a message's index-th image inside its content."""
    return f"\ue002folio-image-{_IMAGE_NONCE}-{index}\ue003"


def content_parts(message: Message) -> list[PromptPart]:
    """A message's content as untrusted text parts and image parts, in reading order; the part that
    closes each of `Message.ends` says so (`ends_document`)."""
    content = message.content
    cuts = sorted({end for end in message.ends if 0 < end <= len(content)})
    if not message.images and not cuts:
        return [PromptPart(content, special=False)] if content else []
    parts: list[PromptPart] = []
    used: list[int] = []
    start = 0
    for stop in [*cuts, len(content)]:
        span = _span_parts(content[start:stop], message.images, used)
        if stop in cuts and span:
            span[-1] = replace(span[-1], ends_document=True)
        parts += span
        start = stop
    if sorted(used) != list(range(len(message.images))):
        raise EngineError("the images of the prompt do not match their places in the text; cannot build a prompt")
    return parts


def _span_parts(text: str, images: tuple[str, ...], used: list[int]) -> list[PromptPart]:
    """Text and image parts of one stretch of content (image slots never straddle a document end)."""
    parts: list[PromptPart] = []
    position = 0
    for match in _IMAGE_SLOT_RE.finditer(text):
        if match.start() > position:
            parts.append(PromptPart(text[position : match.start()], special=False))
        index = int(match.group(1))
        if index >= len(images):
            raise EngineError("an image of the prompt is missing; cannot build a prompt")
        used.append(index)
        parts.append(PromptPart("", special=False, image=images[index]))
        position = match.end()
    if position < len(text):
        parts.append(PromptPart(text[position:], special=False))
    return parts


@dataclass(frozen=True)
class ChatTemplate:
    kind: str  # 'jinja' (from the GGUF) or a built-in turn format: 'gemma', 'chatml'
    source: str = ""
    thinks: bool = False  # the template knows enable_thinking (Qwen3 family)


# Template-less GGUFs (like the starter model) get the turn format their family was trained on.
BUILTIN_BY_ARCHITECTURE = {
    "gemma": "gemma",
    "gemma2": "gemma",
    "gemma3": "gemma",
    "gemma3n": "gemma",
    "qwen2": "chatml",
    "qwen3": "chatml",
    "qwen35": "chatml",
    "qwen3next": "chatml",
}


def template_for(architecture: str, gguf_template: str | None) -> ChatTemplate:
    if gguf_template:
        return ChatTemplate("jinja", gguf_template, thinks="enable_thinking" in gguf_template)
    builtin = BUILTIN_BY_ARCHITECTURE.get(architecture)
    if builtin is None:
        raise EngineError(
            f"the model ({architecture}) has no chat template in its GGUF and Folio does not know its "
            "turn format; use a GGUF that includes a chat template"
        )
    return ChatTemplate(builtin, thinks=architecture.startswith("qwen3"))


def render(
    template: ChatTemplate, messages: list[Message], *, enable_thinking: bool, add_generation_prompt: bool = True
) -> list[PromptPart]:
    if template.kind == "gemma":
        text = _render_gemma(messages, add_generation_prompt)
    elif template.kind == "chatml":
        text = _render_chatml(messages, add_generation_prompt, enable_thinking and template.thinks)
    else:
        text = _render_jinja(template.source, messages, add_generation_prompt, enable_thinking)
    return _split(text, messages)


def _render_gemma(messages: list[Message], add_generation_prompt: bool) -> str:
    # Gemma has no system role: its instructions open the first user turn.
    out: list[str] = []
    pending_system: list[str] = []
    for i, m in enumerate(messages):
        sentinel = _SENTINEL.format(i)
        if m.role == "system":
            pending_system.append(sentinel)
            continue
        role = "model" if m.role == "assistant" else "user"
        body = "\n\n".join([*pending_system, sentinel]) if role == "user" else sentinel
        pending_system = []
        out.append(f"<start_of_turn>{role}\n{body}<end_of_turn>\n")
    if pending_system:
        out.append("<start_of_turn>user\n" + "\n\n".join(pending_system) + "<end_of_turn>\n")
    if add_generation_prompt:
        out.append("<start_of_turn>model\n")
    return "".join(out)


def _render_chatml(messages: list[Message], add_generation_prompt: bool, thinking: bool) -> str:
    out = [f"<|im_start|>{m.role}\n{_SENTINEL.format(i)}<|im_end|>\n" for i, m in enumerate(messages)]
    if add_generation_prompt:
        out.append("<|im_start|>assistant\n" + ("<think>\n" if thinking else "<think>\n\n</think>\n\n"))
    return "".join(out)


def _render_jinja(source: str, messages: list[Message], add_generation_prompt: bool, thinking: bool) -> str:
    import jinja2
    import jinja2.ext
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise EngineError(f"the model's chat template refused the conversation: {message}")

    env = ImmutableSandboxedEnvironment(
        loader=jinja2.BaseLoader(), trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols]
    )
    try:
        compiled = env.from_string(source)
        payload: list[dict[str, Any]] = [
            {"role": m.role, "content": _SENTINEL.format(i)} | ({"reasoning_content": m.thinking} if m.thinking else {})
            for i, m in enumerate(messages)
        ]
        return compiled.render(
            messages=payload,
            add_generation_prompt=add_generation_prompt,
            enable_thinking=thinking,
            bos_token="",  # llama.cpp adds BOS itself when the model wants it
            eos_token="",
            raise_exception=raise_exception,
            strftime_now=lambda fmt: datetime.now().strftime(fmt),
            tools=None,
        )
    except jinja2.TemplateError as exc:
        raise EngineError(f"the model's chat template could not be rendered ({exc})") from exc


def _split(text: str, messages: list[Message]) -> list[PromptPart]:
    parts: list[PromptPart] = []
    position = 0
    seen: set[int] = set()
    for match in _SENTINEL_RE.finditer(text):
        if match.start() > position:
            parts.append(PromptPart(text[position : match.start()], special=True))
        index = int(match.group(1))
        seen.add(index)
        parts += content_parts(messages[index])
        position = match.end()
    if position < len(text):
        parts.append(PromptPart(text[position:], special=True))
    missing = [i for i, m in enumerate(messages) if i not in seen and m.role != "assistant"]
    if missing:
        raise EngineError("the model's chat template dropped part of the conversation; cannot build a prompt")
    return parts


def opens_thinking(parts: list[PromptPart]) -> bool:
    """True when the generation prompt leaves a <think> block open, so output starts in thinking."""
    tail = parts[-1].text if parts and parts[-1].special else ""
    return tail.rfind("<think>") > tail.rfind("</think>")
