"""The permanent part of the status bar: engine state, context gauge, model and tier, network badge."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QProgressBar, QPushButton, QStatusBar

from app.context import AppContext
from app.models.registry import STARTER_NOTICE
from inference.gguf_facts import ModelFacts
from inference.planner import qwen35_tier
from ui.elided_label import ElidedLabel
from ui.safe_text import plain_tooltip
from ui.sizing import compact
from ui.theme import badge_style

ENGINE_STATES = {
    "idle": "idle",
    "loading": "loading the model",
    "reading": "reading",
    "answering": "answering",
    "stopping": "stopping",
    "extracting": "extracting",
    "reviewing": "reviewing against a playbook",
}


class StatusWidgets:
    def __init__(self, bar: QStatusBar, ctx: AppContext) -> None:
        self.ctx = ctx
        # Labels whose text can grow (a long model name, a document being read) are cut in the middle
        # rather than widening the window: the status bar's width is part of the window's minimum.
        self.engine_label = ElidedLabel("engine: idle")
        self.engine_label.setObjectName("engineState")
        self.gauge = QProgressBar()
        self.gauge.setObjectName("contextGauge")
        self.gauge.setMaximumWidth(220)
        self.gauge.setTextVisible(True)
        self.gauge.setToolTip("Tokens in the model's context (documents, conversation, answer) / context size")
        self.gauge.setVisible(False)
        self.model_label = ElidedLabel("model: …")
        self.model_label.setObjectName("activeModel")
        self.demo_badge = QLabel("DEMO MODEL")
        self.demo_badge.setObjectName("demoBadge")
        self.demo_badge.setToolTip(STARTER_NOTICE)
        self.demo_badge.setAccessibleName("Demo model")
        self.demo_badge.setStyleSheet(badge_style())
        self.offline_badge = QLabel()
        self.offline_badge.setObjectName("networkBadge")
        # Read-ahead: what the background reader is doing, and a button to pause it.
        self.reading_label = ElidedLabel()
        self.reading_label.setObjectName("readAheadState")
        self.reading_pause = QPushButton("Pause")
        self.reading_pause.setObjectName("readAheadPause")
        self.reading_pause.setAccessibleName("Pause reading ahead")
        compact(self.reading_pause)
        self.reading_pause.setToolTip("Pause reading documents ahead (what was read is kept)")
        self.reading_label.setVisible(False)
        self.reading_pause.setVisible(False)
        widgets = (self.reading_label, self.reading_pause, self.engine_label, self.gauge, self.model_label)
        for widget in (*widgets, self.demo_badge, self.offline_badge):
            bar.addPermanentWidget(widget)
        self.show_network()
        self.show_active_model()

    def show_network(self) -> None:
        server = self.ctx.settings.server_url.strip()
        self.offline_badge.setText(f"● server {server}" if server else "● offline")
        self.offline_badge.setToolTip(
            plain_tooltip(f"Documents and questions go to the model server at {server} (Tools > Settings to stop)")
            if server
            else "Folio opens no network connections"
        )

    def show_active_model(self) -> None:
        if self.ctx.settings.server_url.strip():  # the server's model is named on the first answer
            self.model_label.setText("model: on the model server")
            self.demo_badge.setVisible(False)
            return
        rows = [r for r in self.ctx.models.all() if r.sha256 == self.ctx.settings.active_model]
        if not rows:
            self.model_label.setText("model: Gemma 3 270M starter")
            self.model_label.setToolTip("tier: demo (the starter model, not for real work)")
            self.demo_badge.setVisible(True)
            return
        record = rows[0]
        tier = "demo" if record.is_starter else (_tier(record.facts) or "custom")
        self.model_label.setText(f"model: {record.label} · {tier}")
        self.model_label.setToolTip(plain_tooltip(f"{record.path}\nsha256 {record.sha256}\ntier: {tier}"))
        self.demo_badge.setVisible(record.is_starter)

    def show_answering_model(self, label: str, demo: bool) -> None:
        tier = "demo" if demo else ""
        self.model_label.setText(f"model: {label}" + (f" · {tier}" if tier and "demo" not in label else ""))
        self.demo_badge.setVisible(demo)

    def show_read_ahead(self, text: str, *, active: bool, paused: bool) -> None:
        """The background reader's state; Pause while it reads (or waits), Resume once paused."""
        self.reading_label.setText(text)
        self.reading_label.setVisible(bool(text))
        self.reading_pause.setText("Resume" if paused else "Pause")
        self.reading_pause.setAccessibleName("Resume reading ahead" if paused else "Pause reading ahead")
        compact(self.reading_pause)
        self.reading_pause.setVisible(active or paused)

    def set_engine(self, state: str, detail: str = "") -> None:
        text = ENGINE_STATES.get(state, state)
        self.engine_label.setText(f"engine: {text}" + (f" ({detail})" if detail else ""))

    def set_context(self, used: int, n_ctx: int) -> None:
        if n_ctx <= 0:
            self.gauge.setVisible(False)
            return
        self.gauge.setVisible(True)
        self.gauge.setMaximum(n_ctx)
        self.gauge.setValue(min(used, n_ctx))
        self.gauge.setFormat(f"context {used:,} / {n_ctx:,}")


def _tier(facts: ModelFacts) -> str | None:
    return qwen35_tier(facts.n_layer, facts.embedding_length) if facts.architecture == "qwen35" else None
