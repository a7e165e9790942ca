"""Core messages are lower-case lines ("the model file is missing"); shown alone they start a sentence."""

from __future__ import annotations


def sentence(text: str) -> str:
    """Capitalise the first word, unless it is a file name or path ("notes.gguf: ..." stays as is)."""
    first = text.split(" ", 1)[0]
    if not first or any(c in first for c in "./\\_") or not first[0].islower():
        return text
    return text[:1].upper() + text[1:]
