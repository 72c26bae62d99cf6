"""The numbers as a person reads them: `dvc metrics show` and `make exps` fit a 160-column terminal, and the
per-track Prefect artifact shows each figure with its change since the previous run."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from flows.metrics_artifact import markdown_table
from pipeline.common.headline import read_headlines, write_headline
from tests.conftest import venv_bin

pytestmark = pytest.mark.slow  # runs DVC in a clone


def _width(text: str) -> int:
    return max((len(line) for line in text.splitlines()), default=0)


def test_dvc_metrics_show_is_a_table_of_systems_by_figures_within_160_columns(repo):
    env = dict(os.environ, COLUMNS="160")
    out = subprocess.run([venv_bin("dvc"), "metrics", "show"], cwd=repo, env=env, capture_output=True, text=True,
                         timeout=120, check=True).stdout
    lines = out.splitlines()
    header = lines[0].split()
    assert {"EM", "F1", "IoU", "R@10", "acc", "acc_challenge", "r"} <= set(header), header
    assert len(lines) >= 21  # a row per system: NLQuAD 7, StrategyQA 6, QuAIL 10, difficulty 3
    assert _width(out) <= 160, _width(out)
    assert "…" not in out


def test_make_exps_shows_a_one_param_experiment_within_160_columns(repo, tmp_path):
    from dvc.utils.hydra import apply_overrides

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    apply_overrides(str(clone / "params.yaml"), ["quail.pmi_window=5"])  # what `dvc exp run -S` writes
    pmi = clone / "metrics/quail/pmi.json"
    figures = json.loads(pmi.read_text())
    figures["acc"] = round(figures["acc"] + 1.25, 2)
    pmi.write_text(json.dumps(figures))
    env = dict(os.environ, COLUMNS="160")
    out = subprocess.run(["make", "-s", "exps", f"VENV={repo / '.venv'}"], cwd=clone, env=env, capture_output=True,
                         text=True, timeout=300, check=True).stdout
    assert "quail.pmi_window" in out and "quail/pmi:acc" in out, out  # one row each: param, then figure
    assert str(figures["acc"]) in out
    assert _width(out) <= 160 and "…" not in out, out


def test_the_artifact_table_marks_each_change_and_new_or_gone_systems():
    before = {"bm25l": {"EM": 10.0, "F1": 40.0}, "old_system": {"EM": 1.0}}
    after = {"bm25l": {"EM": 12.5, "F1": 40.0}, "span_window": {"EM": 3.0, "F1": 30.0}}
    table = markdown_table("nlquad", after, before)
    # the registry's order (IoU, F1, EM: NLQuAD's primary measure first), in make results' units and precision
    assert "| system | F1 % | EM % |" in table
    assert "| bm25l | 40.0 | 12.5 (+2.5) |" in table
    assert "| span_window (new) | 30.0 | 3.0 |" in table
    assert "| old_system (gone) |" in table
    assert "1 figure(s) changed since the previous run." in table
    first = markdown_table("nlquad", after, {})
    assert "(new)" not in first and "First run" in first


def test_the_artifact_keeps_paired_differences_out_of_the_systems_columns():
    """compare's ``A-B`` rows hold A minus B: a table of their own, not rows among the accuracies."""
    after = {"mc_full": {"acc": 40.92, "dev": 45.8}, "pmi": {"acc": 36.1}, "mc_full-pmi": {"acc": 4.83}}
    table = markdown_table("quail", after, {})
    systems, differences = table.split("#### Paired differences (A-B: A minus B, points)")
    assert "| mc_full | 40.9 | 45.8 |" in systems and "| pmi | 36.1 | - |" in systems
    assert "mc_full-pmi" not in systems
    assert "| system | acc % |" in differences and "| mc_full-pmi | +4.8 |" in differences


def test_headline_files_take_only_the_declared_columns(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_headline("quail", "pmi", {"acc": 41.68, "acc_challenge": None})
    assert json.loads((tmp_path / "metrics/quail/pmi.json").read_text()) == {"acc": 41.68}  # None: not written
    with pytest.raises(ValueError, match="accuracy"):
        write_headline("quail", "pmi", {"accuracy": 41.68})  # a new column must be added to KEYS on purpose
    with pytest.raises(ValueError, match="unknown track"):
        write_headline("squad", "x", {"EM": 1.0})
    assert read_headlines(tmp_path / "metrics")["quail"] == {"pmi": {"acc": 41.68}}
