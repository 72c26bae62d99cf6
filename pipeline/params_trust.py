"""Which params a run may set: science, never infrastructure. The allow-list, derived from the schema's markers.

A run's values (an experiment point or sweep from the Prefect API, ``would_rerun -S``, a profile file, the
params an offline node sends back) come from whoever can reach the API or hand over a file. They may choose
the science: budgets, learning rates, seeds, k, shares, baselines' settings, and a model among the ones this
worker has installed. Everything that says *where* (paths, URLs, hosts, ports, the archive, the search
backend, distributed settings, devices, module names, schedules) and every resource limit that guards a stage
against its input comes only from the worker's own checkout (``params.yaml``, ``paths.yaml``) and environment.

Each leaf key of ``pipeline.params.Params`` is marked ``Science[...]`` or ``Infrastructure[...]`` on its field
(``pipeline.common.trust``); the two sets below are read from those markers. A key with no marker is in
neither set, so a run is refused it (``tests/test_params_trust.py`` fails on it) until someone marks it. This file
is not a code dependency of any stage: it decides what may reach ``dvc exp run -S``, not what a stage computes.
"""

from __future__ import annotations

import os
from typing import Any

from pipeline.common.trust import Trust, trust_of
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


def _marked(trust: Trust) -> frozenset[str]:
    """Every ``section.key`` whose field carries ``trust`` (``pipeline.common.trust``: marked where the key is
    defined, in the section's model)."""
    return frozenset(f"{section}.{key}" for section, field in Params.model_fields.items()
                     for key, leaf in field.annotation.model_fields.items() if trust_of(leaf) is trust)


# a run may set these (section.key): the science
SCIENCE: frozenset[str] = _marked(Trust.SCIENCE)
# only the worker's checkout and environment set these: where data comes from and goes, which hosts, ports,
# devices and modules, how hard the stages may be pushed, when the schedule runs
INFRASTRUCTURE: frozenset[str] = _marked(Trust.INFRASTRUCTURE)

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
    from pipeline.training.model_names import OFFLINE_MODEL

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
