"""Which Qwen3.5 size a model file is, from its GGUF geometry (for the status bar)."""

from __future__ import annotations

from inference.gguf_facts import ModelFacts
from inference.planner import QWEN35_TIERS


def tier_name(facts: ModelFacts) -> str | None:
    """'Qwen3.5-9B' etc. when the layers and width match a published tier, else None."""
    if facts.architecture != "qwen35":
        return None
    for tier in QWEN35_TIERS:
        if (facts.n_layer, facts.embedding_length) == (tier.n_layer, tier.n_embd):
            return tier.name
    return None
