"""Not a stage: one StrategyQA setting's questions and contexts, read the same way by its train_, predict_ and
evaluate_strategyqa_qa stages (so the three agree on which questions are trained on, selected on and scored)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pipeline.common.layout import PATHS
from pipeline.common.manifest import source_path, source_sha256
from pipeline.strategyqa.answering import all_paragraphs, setting_questions
from pipeline.strategyqa.data import StrategyQuestion

if TYPE_CHECKING:
    from pipeline.strategyqa.config import StrategyQAParams


@dataclass(frozen=True)
class SettingData:
    """The ``strategyqa_contexts`` paragraphs by id, the setting's ranked ids (``{"train": ..., "eval": ...}``;
    None where the setting retrieves nothing), its train, dev and eval questions, and the training file's sha256
    (in a checkpoint's fingerprint, so a changed file never resumes an old run)."""

    paragraphs: dict[str, dict]
    ranked: dict | None
    train: list[StrategyQuestion]
    dev: list[StrategyQuestion]
    evaluation: list[StrategyQuestion]
    train_sha256: str


def load_setting(p: StrategyQAParams, setting: str, seed: int | None = None) -> SettingData:
    """The setting's data, its dev questions drawn with ``seed`` (a training run's; default the reference
    run's, ``p.seed``): which questions choose the checkpoint is part of what a run draws."""
    ctx = json.loads(PATHS.strategyqa_contexts.contexts.read_text(encoding="utf-8"))
    paragraphs = all_paragraphs(ctx)
    train, dev, evaluation = setting_questions(source_path("strategyqa_train"), source_path("strategyqa_eval"),
                                               paragraphs, setting, p.dev_share,
                                               p.seed if seed is None else seed)
    return SettingData(paragraphs, ctx["ranked"].get(setting), train, dev, evaluation,
                       source_sha256("strategyqa_train"))
