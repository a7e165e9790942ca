"""Model setup, without Qt: whether to show the first-run page, which Qwen3.5 tier this machine can
run, and what the planner would choose for a model, as the plain lines the setup page shows."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from app.engine.plan_report import memory_line
from app.models.registry import ModelRecord, find_starter_file, packaged_starter_available, starter_file_name
from app.settings import engine_draft_tokens
from common.files import atomic_write_text
from inference.gguf_facts import ModelFacts
from inference.planner import (
    GiB,
    Hardware,
    Plan,
    TierAdvice,
    advise_tiers,
    kv_type_supported,
    max_context,
    qwen35_tier,
)

if TYPE_CHECKING:
    from app.context import AppContext
    from app.engine.session import Session
    from app.paths import Paths

FULL_CONTEXT = 262_144  # Qwen3.5's native context: a whole long contract or a filing
LONG_CONTEXT = 131_072  # half of it: most contracts and reports still fit whole
USEFUL_CONTEXT = 32_768  # below this a tier still answers, but only about short documents
SETUP_SEEN_FILE = "model-setup-seen"

# The page explains itself first, in three lines; WHAT_TO_BRING says the rest further down.
FIRST_LINES = (
    "Folio answers from your documents with a language model that runs on this computer; nothing is sent anywhere.",
    "Choose one below: a model another program already keeps here, or a GGUF file from a disk (Qwen3.5-9B reads best).",
    "Until you do, a small demo model answers, for trying Folio only. Tools > Model setup opens this page again.",
)
WHAT_TO_BRING = (
    "Folio works best with <b>Qwen3.5-9B</b> in the 4-bit <b>Q4_K_M</b> GGUF file (about 5.2 GB; the name "
    "looks like <i>Qwen3.5-9B-Q4_K_M.gguf</i>) together with its <b>vision file</b> (a GGUF whose name "
    "contains <i>mmproj</i>), which lets it look at scanned pages, pictures and video frames.",
    "Smaller computers can use a smaller size of the same model: Qwen3.5-4B, 2B or 0.8B. They read the "
    "same documents, answer less carefully, and need less memory. The table below says which sizes this "
    "computer can run.",
    "Folio never downloads anything. Copy the files from a USB stick or a shared drive, or pick a model "
    "that another program (Ollama, LM Studio, Hugging Face) already keeps on this computer: Folio uses "
    "it where it is, without a copy.",
)


def _gib(n: float) -> str:
    return f"{n / GiB:.1f} GiB"


# -- first run ------------------------------------------------------------------------------------------
def active_model_usable(ctx: AppContext) -> bool:
    """A model the user added is the active one and its file is there (of any kind: a Qwen2.5 someone
    chose on purpose is theirs to use, and the page would only cover the chat)."""
    sha = ctx.settings.active_model
    if not sha:
        return False
    found = [m for m in ctx.models.all() if m.sha256 == sha]
    return bool(found) and not found[0].is_starter and Path(found[0].path).exists()


def setup_seen(paths: Paths) -> bool:
    return (paths.config_dir / SETUP_SEEN_FILE).exists()


def mark_setup_seen(paths: Paths) -> None:
    atomic_write_text(paths.config_dir / SETUP_SEEN_FILE, "The first-run model setup page was shown.\n")


def needs_model_setup(ctx: AppContext) -> bool:
    """Show the setup page at start only when no usable model is active (none added, or its file gone;
    no model server) and it was not shown before."""
    if ctx.settings.server_url.strip() or active_model_usable(ctx):
        return False
    return not setup_seen(ctx.paths)


# -- the machine -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class MachineAdvice:
    hardware: Hardware
    tiers: list[TierAdvice]  # for the whole native context
    recommended: str | None

    def summary(self) -> str:
        hw = self.hardware
        gpus = ", ".join(f"{g.name} ({_gib(g.free)} free)" for g in hw.gpus) or "no graphics card used"
        return (
            f"This computer: {_gib(hw.ram_total)} of memory, of which Folio may use {_gib(hw.ram_budget)}; "
            f"{hw.physical_cores} processor cores; {gpus}."
        )

    def recommendation(self) -> str:
        if self.recommended is None:
            return (
                "This computer has too little memory for even the smallest Qwen3.5 to read long documents; "
                "Folio can still answer about a few pages at a time."
            )
        advice = next(t for t in self.tiers if t.tier == self.recommended)
        if advice.fits:
            return f"Recommended here: {self.recommended}. It holds a whole {FULL_CONTEXT:,}-token document."
        return (
            f"Recommended here: {self.recommended}. It holds documents up to about "
            f"{advice.max_context:,} tokens on this computer."
        )


def machine_advice(hardware: Hardware) -> MachineAdvice:
    """Each Qwen3.5 tier against this machine. Recommended: the largest tier that holds a long document
    (half the native context or more: a bigger model reads better than a smaller one reads more),
    else the largest that holds a useful one."""
    tiers = advise_tiers(hardware, FULL_CONTEXT)
    recommended = None
    for floor in (LONG_CONTEXT, USEFUL_CONTEXT):
        fitting = [t.tier for t in tiers if t.max_context >= floor]
        if fitting:
            recommended = fitting[-1]
            break
    return MachineAdvice(hardware, tiers, recommended)


def tier_line(t: TierAdvice) -> tuple[str, str, str]:
    """(tier, whole context?, longest context here) in words for the tier table."""
    whole = f"yes ({_gib(t.memory)}, KV cache {t.kv_type})" if t.fits else "no"
    longest = f"{t.max_context:,} tokens" if t.max_context else "does not fit"
    return t.tier, whole, longest


# -- a model ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ModelPlan:
    model: ModelRecord
    facts: ModelFacts
    hardware: Hardware
    longest_context: int
    plan: Plan

    def lines(self) -> list[str]:
        f, p, hw = self.facts, self.plan, self.hardware
        tier = qwen35_tier(f.n_layer, f.embedding_length) if f.architecture == "qwen35" else None
        kind = tier or ("Qwen3.5" if f.architecture == "qwen35" else f"{f.architecture}, not Qwen3.5")
        lines = [
            f"Model: {self.model.label} ({kind}), native context {f.context_length:,} tokens, "
            f"file {_gib(f.size_bytes)}, {f.mtp_summary}.",
            "Vision file: "
            + (
                Path(self.model.mmproj_path).name
                if self.model.mmproj_path
                else "none — scanned pages and video frames are read as text only"
            ),
        ]
        if self.model.is_starter:
            lines.insert(0, "Demo model: fine for trying Folio, not for real work.")
        if not p.fits:
            lines.append(f"Does not fit: {p.reason}")
            return lines
        lines += [
            f"Longest document on this computer: about {self.longest_context:,} tokens.",
            f"The planner chose: context {p.n_ctx:,} tokens, KV cache {p.kv_type}, {p.n_threads} threads"
            + (f", {p.n_gpu_layers} layers on the graphics card" if p.n_gpu_layers else "")
            + ".",
            f"Predicted memory: {_gib(p.memory.total)} of the {_gib(hw.ram_budget)} Folio may use "
            f"({memory_line(p.memory)}).",
        ]
        lines += [f"Note: {n}." for n in p.notes]
        return lines


def longest_context(
    facts: ModelFacts, hardware: Hardware, *, kv_type: str = "auto", context_cap: int = 0, draft_tokens: int = 0
) -> int:
    """The longest context this machine holds for the model, at the cheapest KV cache allowed."""
    if kv_type == "auto":
        kv_type = "q4_0" if kv_type_supported(facts, "q4_0") else "f16"
    longest = max_context(facts, hardware, kv_type, draft_tokens)
    if context_cap:
        longest = min(longest, context_cap)
    return min(longest, facts.context_length) if facts.context_length else longest


def model_plan(session: Session, model: ModelRecord) -> ModelPlan:
    """What the planner chooses for the longest document this machine can hold with this model."""
    settings = session.settings
    facts = session.facts(model)
    hardware = session.hardware()
    answer = settings.max_answer_tokens
    longest = longest_context(
        facts,
        hardware,
        kv_type=settings.kv_cache_type,
        context_cap=settings.context_cap,
        draft_tokens=engine_draft_tokens(settings),
    )
    chosen = session.plan(model, max(longest - answer, 1), answer)
    # The closed-form longest context and the planner's padding can disagree by a block: step down.
    for _ in range(8):
        if chosen.fits or longest <= 4096:
            break
        longest = int(longest * 0.95) // 256 * 256
        chosen = session.plan(model, max(longest - answer, 1), answer)
    return ModelPlan(model, facts, hardware, longest, chosen)


# -- the starter (demo) model ------------------------------------------------------------------------------
@dataclass(frozen=True)
class StarterStatus:
    installed: bool
    found_file: Path | None  # a starter file beside the installer, ready to install
    file_name: str

    def line(self) -> str:
        if self.installed:
            return (
                "Until you choose a model, Folio answers with a small demo model (Gemma 3 270M): "
                "fine for trying Folio, not for real work."
            )
        if self.found_file is not None:
            return f"The demo model was found at {self.found_file}; install it to try Folio before you bring a model."
        return (
            f"The demo model is not installed. If your copy of Folio came with {self.file_name}, "
            "install it from there to try Folio before you bring a model."
        )


def starter_status(ctx: AppContext) -> StarterStatus:
    installed = packaged_starter_available() or (ctx.paths.models_dir / "starter" / starter_file_name()).is_file()
    return StarterStatus(installed, None if installed else find_starter_file(), starter_file_name())
