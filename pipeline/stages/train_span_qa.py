"""``train_span`` and ``train_longformer``: the span model of either kind (sliding windows, or Longformer on the
whole document), its checkpoint chosen on the dev split as the evaluate stage scores it, once per seed of its
section's ``seeds`` (``pipeline.common.seed_runs``: the first seed's model is ``final/``, the others' under
``seeds/<seed>/``). Writes the models, their curves and ``report`` (each run's training statistics);
``predict_span_qa`` and ``evaluate_span_qa`` are the next stages, so an edit to scoring retrains nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

import json
from dataclasses import dataclass
from pathlib import Path

from pipeline.common.layout import PATHS, Layout
from pipeline.common.files import write_json
from pipeline.common.logs import get_logger
from pipeline.common.seed_runs import SEEDS_DIR, prepare_runs, run_dir
from pipeline.span_qa.data import SpanExamples, load_examples
from pipeline.span_qa.features import WindowFeatures, build_windows
from pipeline.nlquad.metrics import evaluate as score
from pipeline.span_qa.postprocess import Aggregation, predict_from_logits
from pipeline.span_qa.train import logits_of
from pipeline.span_qa.train import train as train_windows
from pipeline.training.curves import training_report
from pipeline.training.finetune import DevSet, TrainConfig
from pipeline.training.model_names import resolve_model_path
from pipeline.launcher.parallel_seeds import train_each_seed

if TYPE_CHECKING:
    from pipeline.params import Params
    from pipeline.span_qa.config import LongformerParams, SpanWindowParams

KINDS = ("span_window", "longformer")


@dataclass(frozen=True)
class Kind:
    """A model kind and its params section. ``doc_stride`` None: windows follow on without overlap (Longformer:
    the whole document in one window up to ``max_seq_len``, a longer one continues where the first ended)."""

    name: str  # "span_window" | "longformer"
    init: str  # model to start from
    doc_stride: int | None
    global_question: bool
    p: SpanWindowParams | LongformerParams

    @property
    def trained(self) -> Layout:
        """Its train stage's paths.yaml group, named in full: a group name built from the kind (an f-string
        ``train_...``) would read, for the layout's checks and the generator, every ``train_*`` group, another
        model family's included."""
        return PATHS.train_span if self.name == "span_window" else PATHS.train_longformer

    @property
    def model_dir(self) -> Path:
        return self.trained.model_dir

    @property
    def model(self) -> Path:
        return self.trained.model

    def run_dir(self, seed: int) -> Path:
        """Where the run of ``seed`` trains; its model is ``<run_dir>/final``."""
        return run_dir(self.model_dir, self.p.seeds, seed)

    def live_dir(self, seed: int) -> Path:
        """The reference run's curves where DVC's plots read them; each other seed's beside them."""
        return self.trained.live if seed == self.p.seed else self.trained.live / SEEDS_DIR / str(seed)


def kind_of(params: Params, name: str) -> Kind:
    if name == "span_window":
        p = params.span_window
        return Kind(name, resolve_model_path(p.model_name_or_path), p.doc_stride, False, p)
    if name == "longformer":
        return Kind(name, str(PATHS.convert_longformer.model), None, True, params.longformer)
    raise ValueError(f"unknown span model kind {name!r}; one of {KINDS}")


def windows(tokenizer, kind: Kind, split: str, labelled: bool) -> tuple[WindowFeatures, SpanExamples]:
    ex, _ = load_examples(PATHS.split.dir / f"{split}.json")
    feats = build_windows(tokenizer, ex.questions, ex.contexts, ex.answers if labelled else None,
                          kind.p.max_seq_len, kind.doc_stride, kind.p.max_question_len, kind.p.answer_windows)
    return feats, ex


@dataclass(frozen=True)
class SpanDevEvaluation:
    """NLQuAD's dev split scored as the evaluate stage scores the eval split: windows, the paper's aggregation
    over windows, EM/F1/IoU."""

    feats: WindowFeatures
    examples: SpanExamples
    dataset: dict
    batch_size: int
    global_question: bool
    n_best: int
    max_answer_tokens: int
    aggregation: Aggregation

    def __call__(self, model, tokenizer) -> dict[str, float]:
        starts, ends = logits_of(model, tokenizer, self.feats, self.batch_size, self.global_question)
        preds = predict_from_logits(self.feats.example_index, self.feats.offset_mapping, starts, ends,
                                    self.examples.contexts, self.n_best, self.max_answer_tokens,
                                    self.aggregation)
        summary, _ = score(dict(zip(self.examples.ids, preds, strict=True)), self.dataset)
        return {k: summary[k] for k in ("f1", "em", "iou")}


def dev_set(tokenizer, kind: Kind, split: str = "dev") -> DevSet:
    p = kind.p
    feats, ex = windows(tokenizer, kind, split, labelled=False)
    dataset = json.loads((PATHS.split.dir / f"{split}.json").read_text(encoding="utf-8"))
    return DevSet(SpanDevEvaluation(feats, ex, dataset, p.eval_batch_size, kind.global_question, p.n_best,
                                    p.max_answer_tokens, p.aggregation), len(ex.ids))


def train(params: Params, name: str, seed: int | None = None) -> dict:
    """Fit one span model kind under one seed (default: the reference run's); run in the stage's process or in
    every torchrun rank (``pipeline.launcher.torchrun``). Returns the training statistics."""
    from transformers import AutoTokenizer

    kind = kind_of(params, name)
    p = kind.p
    seed = p.seed if seed is None else seed
    log = get_logger()
    log.info("%s: cutting the train split into windows of %d tokens", name, p.max_seq_len)
    tokenizer = AutoTokenizer.from_pretrained(kind.init)
    feats, ex = windows(tokenizer, kind, "train", labelled=True)
    dev = dev_set(tokenizer, kind)
    log.info("%s seed %d: %d windows from %d questions; training up to %d steps of batch %d", name, seed,
             len(feats), len(ex.ids), p.max_steps, p.batch_size)
    stats = train_windows(feats, TrainConfig.from_params(p, kind.init, kind.global_question, seed=seed),
                          kind.run_dir(seed), {**p.model_dump(exclude={"seeds", "parallel_runs"}), "seed": seed,
                                               "train_windows": len(feats), "train_questions": len(ex.ids)},
                          dev=dev, log_dir=kind.live_dir(seed))
    return {**stats, "seed": seed}


def run(params: Params, name: str) -> dict:
    """Every seed: in turn, or ``parallel_runs`` at a time on a CPU (``pipeline.launcher.parallel_seeds``). A
    killed stage resumes its unfinished seeds from their last checkpoints (DVC keeps ``seeds/`` and the first
    seed's checkpoints beside its ``final/`` while it reruns the stage); a finished seed trains again."""
    kind = kind_of(params, name)
    prepare_runs(kind.model_dir, kind.trained.live, kind.p.seeds)
    every = train_each_seed(train, params, name, kind.p, kind.run_dir)
    for stats in every:
        print({k: stats[k] for k in ("seed", "tokens_per_s_this_run", "resumed_from_step", "device", "precision")})
    first = every[0]
    runs = [training_report(stats) for stats in every]  # timings and resume points vary run to run: logged, not kept
    write_json(kind.trained.report, {**runs[0], "runs": runs})
    return {**first, "runs": len(runs)}  # the reference run's statistics (its speed too), for the flow's log
