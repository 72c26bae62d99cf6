"""`make exps` (``python -m pipeline.experiments.table``) on real DVC experiments (`dvc exp run -S`): one
column per experiment, only the params and figures that differ, within the width asked for."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import venv_bin

pytestmark = pytest.mark.slow  # runs dvc exp

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org"}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("exps") / "repo"
    root.mkdir()
    (root.parent / "shared").mkdir()  # a benchmark file outside the checkout, as params.yaml's ../shared/...
    (root.parent / "shared/bench.json").write_text("{}\n")
    env = dict(os.environ, **GIT_ENV)

    def run(*cmd: str) -> None:
        subprocess.run(cmd, cwd=root, env=env, check=True, capture_output=True, timeout=300)

    (root / "params.yaml").write_text("span_window:\n  learning_rate: 0.0001\n  max_steps: 60\n"
                                      "retrieval_and_everything_else:\n  a_rather_long_parameter_name: 3\n")
    (root / "train.py").write_text(textwrap.dedent("""\
        import json, os, yaml
        p = yaml.safe_load(open("params.yaml"))["span_window"]
        os.makedirs("metrics/nlquad", exist_ok=True)
        f1 = round(30 + p["max_steps"] / 10, 2)
        json.dump({"EM": round(f1 / 5, 2), "F1": f1, "IoU": 20.0, "dev": f1 + 1}, open("metrics/nlquad/span_window.json", "w"))
        """))
    (root / "dvc.yaml").write_text(textwrap.dedent(f"""\
        stages:
          train_span:
            cmd: {sys.executable} train.py
            deps: [train.py, ../shared/bench.json]
            params: [span_window]
            metrics:
              - metrics/nlquad/span_window.json:
                  cache: false
        """))
    run("git", "init", "-q")
    run(venv_bin("dvc"), "init", "-q")
    run(venv_bin("dvc"), "config", "core.analytics", "false")
    run(venv_bin("dvc"), "repro", "-q")
    run("git", "add", "-A")
    run("git", "commit", "-qm", "baseline")
    for steps in (20, 120):
        run(venv_bin("dvc"), "exp", "run", "-q", "-S", f"span_window.max_steps={steps}", "-n", f"steps-{steps}")
    return root


def test_experiments_side_by_side_fit_160_columns(project, repo):
    res = subprocess.run([venv_bin("python"), "-m", "pipeline.experiments.table", "--width", "160"], cwd=project,
                         env=dict(os.environ, PYTHONPATH=str(repo)), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    lines = res.stdout.splitlines()
    assert max(map(len, lines)) <= 160, res.stdout
    header = lines[0].split()
    assert {"steps-20", "steps-120"} <= set(header), res.stdout
    rows = {line.split()[0]: line.split()[1:] for line in lines[2:]}
    assert "span_window.max_steps" in rows and {"20", "120", "60"} <= set(rows["span_window.max_steps"])
    assert "nlquad/span_window:F1" in rows and "42" in rows["nlquad/span_window:F1"]  # 30 + 120/10
    assert "span_window.learning_rate" not in rows and "nlquad/span_window:IoU" not in rows  # unchanged: left out


def test_many_experiments_stay_within_the_width_and_say_what_is_left_out():
    from pipeline.experiments.table import render

    cols = [("workspace", {"span_window.max_steps": 60, "nlquad/span_window:F1": 36.0})]
    cols += [(f"exp-{i:02d}-with-a-long-name", {"span_window.max_steps": i, "nlquad/span_window:F1": 30 + i / 3})
             for i in range(30)]
    text = render(cols, width=160)
    assert max(map(len, text.splitlines())) <= 160
    assert "more experiment(s) past 160 columns" in text


def test_the_layout_file_is_not_a_param_row():
    """DVC lists dvc.yaml's vars file (paths.yaml) among the params; it says where outputs live, not how an
    experiment differs, so it is not a row even with --all."""
    from pipeline.experiments.table import columns

    entry = {"rev": "workspace", "data": {
        "params": {"params.yaml": {"data": {"quail": {"pmi_window": 5}}},
                   "paths.yaml": {"data": {"paths": {"split": {"report": "reports/split.json"}}}}},
        "metrics": {"metrics/quail/pmi.json": {"data": {"acc": 30.1}}}}}
    [(name, values)] = columns([entry])
    assert name == "workspace" and values == {"quail.pmi_window": 5, "quail/pmi:acc": 30.1}


# docs/experiments.md: DVC 3.67 names a dep outside the checkout `../shared/...` in the workspace and `shared/...`
# in a committed revision or an experiment, so `--only-changed` shows every benchmark file twice; this drops both
DROP_SHARED = "^(\\.\\./)?shared/"


def test_exp_show_as_documented_names_no_benchmark_file_twice(project):
    def header(*extra: str) -> list[str]:
        res = subprocess.run([venv_bin("dvc"), "exp", "show", "--only-changed", "--csv", *extra], cwd=project,
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        return res.stdout.splitlines()[0].split(",")

    plain = header()
    assert "../shared/bench.json" in plain and "shared/bench.json" in plain  # DVC's two names for one file
    documented = header("--drop", DROP_SHARED)
    assert not [c for c in documented if "shared/" in c], documented
    assert "span_window.max_steps" in documented and any(c.endswith("F1") for c in documented), documented
    assert DROP_SHARED in (Path(__file__).parents[1] / "docs/experiments.md").read_text()

