"""Which params a run may set: science, never infrastructure. The one allow-list, beside the schema.

A run's values (an experiment point or sweep from the Prefect API, ``would_rerun -S``, a profile file, the
params an offline node sends back) come from whoever can reach the API or hand over a file. They may choose
the science: budgets, learning rates, seeds, k, shares, baselines' settings, and a model among the ones this
worker has installed. Everything that says *where* (paths, URLs, hosts, ports, the archive, the search
backend, distributed settings, devices, module names, schedules) and every resource limit that guards a stage
against its input comes only from the worker's own checkout (``params.yaml``, ``paths.yaml``) and environment.

Every leaf key of ``pipeline.params.Params`` is in exactly one of the two sets (``tests/test_params_trust.py``
fails on a new key that is in neither), so a key added later is refused until someone classifies it. This file
is not a code dependency of any stage: it decides what may reach ``dvc exp run -S``, not what a stage computes.
"""

from __future__ import annotations

import os
from typing import Any

from pipeline.params import Params
from pipeline.training.config import TrainBudget

# the params sections of the models the pipeline fine-tunes (each a TrainBudget): what the GPU profile may set,
# what a run may choose of them, and what an imported GPU run may differ in
TRAINED_SECTIONS: tuple[str, ...] = tuple(name for name, field in Params.model_fields.items()
                                          if isinstance(field.annotation, type)
                                          and issubclass(field.annotation, TrainBudget))
# what an imported GPU run may differ in: the trained models' sections, and how often StrategyQA is trained over
# (its cross-validation, which the GPU profile turns on)
PROFILE_SECTIONS = (*TRAINED_SECTIONS, "strategyqa_cv")
# the worker's to decide: which device, and how many of its cores torch may take
WORKER_BUDGET_KEYS = ("device", "cpu_threads")

# a run may set these (section.key)
SCIENCE: frozenset[str] = frozenset({
    # the offline sample: which articles and questions the generator makes
    *(f"sample.{k}" for k in ("seed", "n_articles", "duplicate_captures", "cross_domain_duplicates",
                               "non_article_pages", "out_of_range_captures", "start", "end", "sections_per_article",
                               "question_heading_share", "bullet_section_share", "explainer_share", "section_words",
                               "links_per_article", "wiki_articles", "strategyqa_questions")),
    "discover.start", "discover.end", "discover.limit",
    "extract.keep", "extract.min_words",
    "wiki.min_chars", "wiki.strategyqa_evidence",
    "retrieve.decompositions", "retrieve.k",
    "split.seed", "split.ratios", "split.group_key",
    "nlquad_baselines.window_words", "nlquad_baselines.seed", "nlquad_baselines.eval_split",
    # every budget key a trained model shares but where it runs and on how many of the worker's cores
    *(f"{section}.{k}" for section in TRAINED_SECTIONS for k in TrainBudget.model_fields
      if k not in WORKER_BUDGET_KEYS),
    *(f"{section}.{k}" for section in ("span_window", "longformer")
      for k in ("max_question_len", "n_best", "max_answer_tokens", "eval_split")),
    "span_window.doc_stride", "span_window.model_name_or_path",
    "longformer.source_model", "longformer.attention_window",
    "strategyqa_qa.model_name_or_path", "strategyqa_qa.k",
    "strategyqa_qa.dev_share", "strategyqa_qa.start_from", "strategyqa_qa.control_max_steps",
    "strategyqa_cv.folds", "strategyqa_cv.settings", "strategyqa_cv.seed",
    "boolq_aux.model_name_or_path", "boolq_aux.heldout_share", "boolq_aux.dev_share",
    "quail.train_share", "quail.seed", "quail.pmi_window", "quail.pmi_max_ngram", "quail.pmi_stop_word_ngrams",
    "quail.ir_require_overlap", "quail.lstm_hidden",
    "quail_mc.model_name_or_path", "quail_mc.dev_share",
    "difficulty.models",
})

# only the worker's checkout and environment set these: where data comes from and goes, which hosts, ports,
# devices and modules, how hard the stages may be pushed, when the schedule runs
INFRASTRUCTURE: frozenset[str] = frozenset({
    "archive.endpoint", "archive.local_warcs", "archive.collection",
    "discover.url_prefixes", "discover.article_pattern", "discover.exclude_pattern", "discover.page_size",
    *(f"crawl.{k}" for k in ("requests_per_minute", "autothrottle", "concurrency", "retries", "backoff_base_s",
                              "backoff_max_s", "timeout_s", "follow_depth", "contact")),
    "build_nlquad.source",
    "extract.max_page_bytes", "extract.max_depth", "extract.max_elements", "extract.max_sections",
    "extract.bad_records",
    "wiki.dump", "wiki.workers", "wiki.max_document_bytes",
    *(f"search.{k}" for k in ("backend", "es_urls", "es_alias", "es_shards", "es_replicas", "es_timeout_s",
                               "es_bulk_chunk", "es_bulk_threads", "es_bulk_retries", "index_threads")),
    "retrieve.questions", "retrieve.predictions",
    *(f"{section}.{k}" for section in TRAINED_SECTIONS for k in WORKER_BUDGET_KEYS),
    "strategyqa_qa.predicted_decompositions", "strategyqa_qa.gold_paragraphs", "boolq_aux.file",
    *(f"benchmark_sources.{k}" for k in ("strategyqa_train", "strategyqa_eval", "quail_dev", "quail_challenge",
                                          "quail_paper_tables", "strategyqa_paragraphs")),
    "quail.word_vectors",
    "difficulty.human_accuracies",
    "distributed.nproc_per_node", "distributed.nnodes", "distributed.rdzv_endpoint",
    "schedule.cron", "schedule.timezone", "schedule.deployment_name",
})

MODELS_ENV = "QA_PIPELINE_RUN_MODELS"  # comma-separated names a run may choose besides the PyPI MiniLM


class NotRunSettable(ValueError):
    """A run tried to set a key, or a value, that only the worker's own configuration may set."""


def schema_keys() -> set[str]:
    """Every ``section.key`` of the params schema."""
    return {f"{section}.{key}" for section, field in Params.model_fields.items()
            for key in field.annotation.model_fields}


# model choice: among the models this worker has installed, never a path or a hub download. Every key of the
# schema that names a model to load, derived (a list kept by hand once left boolq_aux's model out)
MODEL_KEYS: frozenset[str] = frozenset(k for k in schema_keys()
                                       if k.endswith((".model_name_or_path", ".source_model")))


def installed_models() -> set[str]:
    from pipeline.training.finetune import OFFLINE_MODEL

    extra = {m.strip() for m in os.environ.get(MODELS_ENV, "").split(",") if m.strip()}
    return {OFFLINE_MODEL, *extra}


def check_run_settable(point: dict[str, Any], source: str = "a run") -> None:
    """Refuse, naming the key, any key outside ``SCIENCE`` and any model that is not installed here."""
    infrastructure = sorted(k for k in point if k in INFRASTRUCTURE)
    if infrastructure:
        raise NotRunSettable(
            f"{source} may not set {', '.join(infrastructure)}: paths, hosts, ports, devices, modules and limits "
            "come from the worker's own params.yaml and environment (the keys a run may set: SCIENCE in "
            "pipeline/params_trust.py)")
    unknown = sorted(k for k in point if k not in SCIENCE)
    if unknown:
        raise NotRunSettable(f"{source}: {', '.join(unknown)} is not a params key a run may set")
    models = installed_models()
    for key in sorted(MODEL_KEYS & set(point)):
        if point[key] not in models:
            raise NotRunSettable(f"{source}: {key}={point[key]!r}: a run chooses among the models installed on "
                                 f"this worker ({', '.join(sorted(models))}; ${MODELS_ENV} adds more)")
