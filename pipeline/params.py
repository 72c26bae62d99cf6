"""Typed, validated view of ``params.yaml``.

Every stage validates the whole file before it touches anything, so a typo in one section is caught by the
first stage that runs rather than silently falling back to a default (pydantic ``extra="forbid"``). The
message names the dotted key path and what is allowed there, because "validation error" alone sends a
researcher hunting through a 100-line YAML file.

Every section is defined in its package's ``config`` module (the sample builder, the archive, NLQuAD's
discovery, extraction, build, split and baselines, the crawler, Wikipedia, the search backends, StrategyQA,
the span models, QuAIL, the difficulty study, the training loop and its launch, the benchmark files) and
composed here: the package takes its own section and never imports this schema. Only the schedule, which the
Prefect deployment reads, is defined here. Each field is marked ``Science[...]`` or ``Infrastructure[...]``
(``pipeline.common.trust``): whether a run may set it.

``python -m pipeline.params --check [FILE]`` validates without running anything.
"""

from __future__ import annotations

import argparse
import difflib
import math
import re
import sys
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import yaml
from pydantic import (
    BaseModel,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from pipeline.common.config import BenchmarkSourcesParams
from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure
from pipeline.crawl.config import CrawlParams
from pipeline.difficulty.config import DifficultyParams
from pipeline.nlquad.config import (BuildNLQuADParams, DiscoverParams, ExtractParams, NLQuADBaselineParams,
                                    SplitParams)
from pipeline.quail.config import QuailMCParams, QuailParams
from pipeline.sample.config import SampleParams
from pipeline.search.config import SearchParams
from pipeline.span_qa.config import LongformerParams, SpanWindowParams
from pipeline.strategyqa.config import (BoolQAuxParams, RetrieveParams, StrategyQABoWParams, StrategyQACVParams,
                                        StrategyQAParams)
from pipeline.training.config import DistributedParams, TrainBudget
from pipeline.wayback.config import ArchiveParams
from pipeline.wiki.config import WikiParams

DEFAULT_PARAMS_FILE = Path("params.yaml")
# The values live in params.yaml only (the file DVC tracks); the section models hold types and limits, no
# defaults, so a key missing from the file is an error that names it rather than a silent second default.
PROJECT_PARAMS_FILE = Path(__file__).resolve().parents[1] / "params.yaml"


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


# Bounds on the other science keys whose value sizes work (pages the sample writes, windows a document is cut
# into, positions a Longformer attends over) or is handed to a library with its own range (a seed): a run may
# set them, so 10^12 is refused here, where every way a value enters is validated. A lower bound where a small
# value multiplies work (a window every token). tests/test_params.py walks the schema: every Science number is
# bounded above, by its field, BUDGET_LIMITS or this table.
SEED_RANGE = (0, 2**32 - 1)
SCIENCE_LIMITS: dict[str, tuple[float, float]] = {
    "sample.duplicate_captures": (0, 10_000), "sample.cross_domain_duplicates": (0, 10_000),
    "sample.non_article_pages": (0, 10_000), "sample.out_of_range_captures": (0, 10_000),
    "sample.strategyqa_questions": (0, 100_000), "extract.min_words": (0, 100_000), "wiki.min_chars": (1, 1_000_000),
    "span_window.max_question_len": (4, 16384), "span_window.doc_stride": (16, 16384),
    "longformer.max_question_len": (4, 16384), "longformer.attention_window": (2, 16384),
    # a training section's seeds are checked by TrainBudget itself (a list: each in range, none repeated)
    **{f"{s}.seed": SEED_RANGE for s in ("sample", "split", "nlquad_baselines", "strategyqa_cv", "quail")},
}
MAX_CHECKPOINTS = 100  # max_steps / checkpoint_every: each one writes the model and optimizer state
MAX_EVALUATIONS = 100  # max_steps / eval_every: each one scores the whole selection-dev set


def _raise_budget_errors(model: BaseModel) -> None:
    """Every training section of ``model`` (the whole file, or a stage's sections) within BUDGET_LIMITS, and every
    key of SCIENCE_LIMITS it holds within its range."""
    errors = [e for name in type(model).model_fields if isinstance(getattr(model, name), TrainBudget)
              for e in _budget_errors(name, getattr(model, name))]
    for key, (low, high) in SCIENCE_LIMITS.items():
        section, field = key.split(".", 1)
        holder = getattr(model, section, None) if section in type(model).model_fields else None
        value = getattr(holder, field, None) if holder is not None else None
        if value is not None and not low <= value <= high:
            errors.append(f"{key}: {value} is outside {low:g}..{high:g}")
    if errors:
        raise ValueError("; ".join(errors))


def _budget_errors(name: str, section: TrainBudget) -> list[str]:
    errors = []
    for key, limit in BUDGET_LIMITS.items():
        value = getattr(section, key)
        if not math.isfinite(value) or value > limit:
            errors.append(f"{name}.{key}: {value} is over the limit of {limit:g}")
    if section.max_steps > MAX_CHECKPOINTS * section.checkpoint_every:
        errors.append(f"{name}.checkpoint_every: {section.checkpoint_every} saves more than {MAX_CHECKPOINTS} "
                      f"checkpoints in {section.max_steps} steps; at least {math.ceil(section.max_steps / MAX_CHECKPOINTS)}")
    steps = max(section.max_steps, getattr(section, "control_max_steps", None) or 0)  # StrategyQA's control too
    if steps > MAX_EVALUATIONS * section.eval_every:
        errors.append(f"{name}.eval_every: {section.eval_every} scores selection-dev more than {MAX_EVALUATIONS} "
                      f"times in {steps} steps; at least {math.ceil(steps / MAX_EVALUATIONS)}")
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
    strategyqa_bow: StrategyQABoWParams
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
