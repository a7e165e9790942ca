"""Core messages are lower-case lines ("the model file is missing"); shown alone they start a sentence."""

from __future__ import annotations


def sentence(text: str) -> str:
    """Capitalise the first word, unless it is a file name or path ("notes.gguf: ..." stays as is)."""
    first = text.split(" ", 1)[0]
    if not first or any(c in first for c in "./\\_") or not first[0].islower():
        return text
    return text[:1].upper() + text[1:]


def shortened(name: str, chars: int = 40) -> str:
    """A long file name cut in the middle to `chars` characters, for a line that says more after it
    (a progress bar, a status message); the whole name is shown where the document is listed."""
    if len(name) <= chars:
        return name
    head = (chars - 1) // 2
    return f"{name[:head]}…{name[len(name) - (chars - 1 - head) :]}"


def without_advice(reason: str) -> str:
    """A core refusal without its command-line advice ("...; select fewer pages or documents"): the
    window offers its own ways on (the strategy dialog), so the advice would contradict them."""
    return reason.split("; select fewer", 1)[0]
