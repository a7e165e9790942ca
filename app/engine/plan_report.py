"""`folio plan`: what the planner would choose for these documents on this machine, in plain lines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.engine.documents import prompt_documents
from app.engine.session import Session
from app.models.registry import ModelRecord
from assets import read_text
from inference.chat_format import template_for
from inference.gguf_facts import ModelFacts
from inference.planner import GiB, Hardware, MemoryEstimate, MiB, Plan, TierAdvice, advise_tiers, recommended_tier
from inference.prompt import build_messages, render_prompt

if TYPE_CHECKING:
    from app.context import AppContext

PLACEHOLDER_QUESTION = "What does the document say about the main obligations of each party?"


@dataclass(frozen=True)
class PlanReport:
    model: ModelRecord
    facts: ModelFacts
    hardware: Hardware
    document_tokens: int  # the prompt with instructions, documents and a typical question
    plan: Plan
    tiers: list[TierAdvice]
    recommended: str | None


def plan_report(ctx: AppContext, session: Session, document_ids: list[int]) -> PlanReport:
    model = ctx.models.active(ctx.settings)
    facts = session.facts(model)
    answer = ctx.settings.max_answer_tokens
    if document_ids:
        template = template_for(model.architecture, facts.chat_template)
        documents = prompt_documents(ctx, document_ids, images=model.mmproj_path is not None)
        messages = build_messages(read_text("prompts", "answer.md"), documents, [], PLACEHOLDER_QUESTION)
        rendered = render_prompt(template, messages, enable_thinking=ctx.settings.thinking)
        tokens = session.count_tokens(model, rendered).total
    else:
        tokens = max(facts.context_length - answer, 0)  # no documents: the model's whole context
    hardware = session.hardware()
    chosen = session.plan(model, tokens, answer)
    context = max(tokens + answer, 1)
    return PlanReport(
        model, facts, hardware, tokens, chosen, advise_tiers(hardware, context), recommended_tier(hardware, context)
    )


def _size(n: int) -> str:
    return f"{n / GiB:.2f} GiB" if n >= GiB else f"{n / MiB:.0f} MiB"


def memory_line(m: MemoryEstimate) -> str:
    parts = [
        f"weights {_size(m.weights)}",
        f"KV cache {_size(m.kv)}",
        f"recurrent state {_size(m.recurrent)}",
        f"compute {_size(m.compute)}",
        f"output {_size(m.output)}",
        f"vocabulary {_size(m.vocab)}",
        f"runtime {_size(m.runtime)}",
    ]
    gpu = f" ({_size(m.gpu)} of it on the GPU)" if m.gpu else ""
    return ", ".join(parts) + f" = {_size(m.total)}{gpu}"


def report_lines(r: PlanReport) -> list[str]:
    f, hw, p = r.facts, r.hardware, r.plan
    layers = f"{f.n_layer} layers"
    if f.recurrent_layers:
        layers += f" ({len(f.full_attention_layers)} attention, {len(f.recurrent_layers)} recurrent)"
    gpus = ", ".join(f"{g.name} {_size(g.free)} free" for g in hw.gpus) or "no GPU offload"
    lines = [
        f"Model: {r.model.label}: {f.architecture}, {layers}, vocabulary {f.vocab_size:,}, "
        f"native context {f.context_length:,}, MTP layers: {'yes' if f.has_mtp else 'no'}",
        f"Machine: {_size(hw.ram_total)} RAM ({_size(hw.ram_budget)} for Folio, {_size(hw.ram_available)} free now), "
        f"{hw.physical_cores} cores, {gpus}",
        f"Prompt: {r.document_tokens:,} tokens + {p.needed_tokens - r.document_tokens:,} for the answer",
    ]
    if p.fits:
        lines.append(
            f"Plan: context {p.n_ctx:,} tokens, KV cache {p.kv_type}, flash attention "
            f"{'on' if p.flash_attn else 'off'}, batch {p.n_batch}, {p.n_threads} threads, "
            f"{p.n_gpu_layers} GPU layers"
        )
        lines.append("Memory: " + memory_line(p.memory))
        lines += [f"Note: {n}" for n in p.notes]
        lines.append("Fits: yes")
    else:
        lines.append(f"Does not fit: {p.reason}")
    lines.append(f"Qwen3.5 tiers for {p.needed_tokens:,} tokens on this machine:")
    for t in r.tiers:
        verdict = f"fits (KV {t.kv_type}, {_size(t.memory)})" if t.fits else "does not fit"
        lines.append(f"  {t.tier:<14} {verdict:<28} longest context here {t.max_context:,} tokens")
    lines.append(f"Recommended tier: {r.recommended or 'none: select fewer pages'}")
    return lines
