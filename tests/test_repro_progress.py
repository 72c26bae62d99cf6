"""`make repro` says how far a full run is: DVC's own plan (`dvc repro --dry`), a line per stage with its
place and the time left from the last measured stage times."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from pipeline.experiments.repro import progress_line, stage_seconds


def test_the_line_counts_the_plan_and_the_time_left(tmp_path):
    reference = tmp_path / "ref.json"
    reference.write_text(json.dumps({"stages": {"a": 600, "b": 1200, "c": 60}}))
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"b": 300}))  # this checkout's own last time wins
    seconds = stage_seconds(measured, reference)
    assert seconds == {"a": 600.0, "b": 300.0, "c": 60.0}
    plan = ["a", "b", "c", "d"]
    assert progress_line("a", plan, seconds) == "[repro] stage 1/4 a, about 16 min left (+1 stage never timed)"
    assert progress_line("c", plan, seconds) == "[repro] stage 3/4 c, about 1 min left (+1 stage never timed)"
    assert progress_line("d", plan, seconds) == "[repro] stage 4/4 d"
    # DVC may start c before b (independent stages): c is then the second started, b and c are left
    assert progress_line("c", plan, seconds, {"a"}) == "[repro] stage 2/4 c, about 6 min left (+1 stage never timed)"
    assert progress_line("b", plan, seconds, {"a", "c"}) == "[repro] stage 3/4 b, about 5 min left (+1 stage never timed)"


def test_a_run_prints_its_place_before_each_stage_and_records_nothing_it_did_not_run(tmp_path, repo):
    """A two-stage DVC project run through the wrapper: DVC's own output, with a progress line before each
    stage; a second run has nothing to do and says so."""
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True, env=env)
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  first:\n    cmd: echo one > one.txt\n    outs: [one.txt]\n"
        "  second:\n    cmd: cat one.txt > two.txt\n    deps: [one.txt]\n    outs: [two.txt]\n")
    run = subprocess.run([sys.executable, "-m", "pipeline.experiments.repro"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert "[repro] up to 2 stage(s) to run" in lines[0], run.stdout + run.stderr
    assert lines.index("[repro] stage 1/2 first") < lines.index("Running stage 'first':")
    assert lines.index("[repro] stage 2/2 second") < lines.index("Running stage 'second':")
    again = subprocess.run([sys.executable, "-m", "pipeline.experiments.repro"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "[repro] stage" not in again.stdout, again.stdout


def test_the_reference_is_read_from_a_repro_log_and_keeps_the_times_of_stages_dvc_skipped(tmp_path):
    """`python -m benchmarks.stage_seconds repro.log`: a stage's time is its flow run's Beginning-to-Completed
    span; a stage DVC skipped in that run keeps the earlier reference's time, named in `carried_over` and left
    out of `stage_total_s`, so `make repro` never loses the estimate of a stage the last run did not need."""
    from benchmarks.stage_seconds import main

    (tmp_path / "stage_seconds.json").write_text(json.dumps({"stages": {"train": 99.0, "evaluate": 2.5}}))
    log = tmp_path / "repro.log"
    log.write_text(
        "23:59:50.000 | INFO    | Flow run 'train' - Beginning flow run 'train' for flow 'train'\n"
        "00:00:20.500 | INFO    | Flow run 'train' - Finished in state Completed()\n"
        "Stage 'evaluate' didn't change, skipping\n"
        "00:00:25.000 | INFO    | Flow run 'predict' - Beginning flow run 'predict' for flow 'predict'\n"
        "00:00:27.000 | INFO    | Flow run 'predict' - Finished in state Failed()\n")
    assert main([str(log), "--out-dir", str(tmp_path), "--note", "a test log."]) == 0
    result = json.loads((tmp_path / "stage_seconds.json").read_text())
    assert result["stages"] == {"train": 30.5, "evaluate": 2.5}  # past midnight; the failed stage is not timed
    assert result["carried_over"] == ["evaluate"] and result["stage_total_s"] == 30.5
    assert result["note"].startswith("a test log. From a full dvc repro")


def test_a_target_counts_its_upstream_stages_and_help_is_not_a_stage(tmp_path, monkeypatch):
    """``make quail`` on a fresh clone runs the target's upstream stages too: the plan counts them (asked about
    the target alone, DVC's status said 1 stage where 3 ran); ``--help`` prints the usage, not a stage error."""
    from pipeline.experiments.repro import planned_stages

    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True, env=env)
    (tmp_path / "dvc.yaml").write_text(
        "stages:\n  first:\n    cmd: echo one > one.txt\n    outs: [one.txt]\n"
        "  second:\n    cmd: cat one.txt > two.txt\n    deps: [one.txt]\n    outs: [two.txt]\n"
        "  third:\n    cmd: cat two.txt > three.txt\n    deps: [two.txt]\n    outs: [three.txt]\n")
    monkeypatch.chdir(tmp_path)  # a target is named as `make` names it, from the checkout's root
    assert planned_stages(["third"]) == ["first", "second", "third"]
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])  # this checkout's code, whatever is installed
    usage = subprocess.run([sys.executable, "-m", "pipeline.experiments.repro", "--help"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=120)
    assert usage.returncode == 0 and "progress line" in usage.stdout and "Running stage" not in usage.stdout
    # --dry: the whole plan of a fresh checkout, where `dvc repro --dry` stops at the first input not built yet
    dry = subprocess.run([sys.executable, "-m", "pipeline.experiments.repro", "--dry", "third"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert dry.returncode == 0, dry.stderr
    assert [line.split("\t")[0] for line in dry.stdout.splitlines()[:3]] == ["first", "second", "third"]
    assert "3 stage(s) would run" in dry.stdout and not (tmp_path / "one.txt").exists()
    dvc_dry = subprocess.run(["dvc", "repro", "--dry", "third"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert dvc_dry.returncode != 0  # DVC's own dry run cannot plan past the missing one.txt


def test_the_plan_lists_stages_in_the_order_dvc_runs_them(tmp_path, monkeypatch):
    """Independent stages run in an order of DVC's own choosing (a post-order walk of its graph), not in a
    topological order of ours: the plan and `--dry` list them as the real run starts them."""
    from pipeline.experiments.repro import planned_stages

    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["dvc", "init", "--no-scm", "-q"], cwd=tmp_path, check=True, env=env)
    stages = {"zeta": [], "alpha": [], "mid": ["zeta", "alpha"], "beta": ["zeta"], "top": ["mid", "beta"],
              "solo": []}
    lines = ["stages:"]
    for name, deps in stages.items():
        cmd = " && ".join([f"cat {d}.txt > /dev/null" for d in deps] + [f"echo {name} > {name}.txt"])
        lines += [f"  {name}:", f"    cmd: {cmd}", f"    outs: [{name}.txt]"]
        if deps:
            lines.append(f"    deps: [{', '.join(d + '.txt' for d in deps)}]")
    (tmp_path / "dvc.yaml").write_text("\n".join(lines) + "\n")
    monkeypatch.chdir(tmp_path)
    plan = planned_stages([])
    ran = subprocess.run(["dvc", "repro"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    order = [line.split("'")[1] for line in ran.stdout.splitlines() if line.startswith("Running stage '")]
    assert sorted(plan) == sorted(stages) and plan == order, (plan, order)


def test_the_committed_reference_times_every_stage_of_the_pipeline(repo):
    """make repro's "about N min left" and would_rerun's cost read the committed reference until a checkout has
    timed its own stages: a stage missing from it is counted as "never timed" on every fresh clone."""
    from pipeline.experiments.repro import REFERENCE

    names = subprocess.run(["dvc", "stage", "list", "--name-only"], cwd=repo, capture_output=True, text=True,
                           check=True, env=dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                                                                 f"{os.environ['PATH']}")).stdout.split()
    timed = json.loads(REFERENCE.read_text(encoding="utf-8"))["stages"]
    assert names and not [n for n in names if n not in timed], sorted(set(names) - set(timed))


def test_the_readme_cost_says_which_stages_the_timed_run_skipped_and_how_warm_its_set_up_was():
    """A fresh clone whose outputs come out byte-identical skips the stages downstream of them (DVC: inputs
    unchanged), so its time is short of a rebuild whose bytes differ: the paragraph names how many were skipped
    and what they cost at their earlier times, and whether the package cache was filled (set-up's time)."""
    from pipeline.experiments.results_table import repro_cost

    timing = {"stages": {"train_span": 600.0, "predict_span": 60.0, "evaluate_span": 30.0, "compare": 30.0},
              "stage_total_s": 660.0, "log_span_s": 680.0, "carried_over": ["evaluate_span", "compare"],
              "make_repro_s": 700.0, "fresh_clone": True, "alone": True, "package_cache": "warm",
              "cpu": {"model": "AMD EPYC", "native_bf16": True}, "commit": "abc1234"}
    text = " ".join(repro_cost(timing).split())
    assert "`make repro` 12 min, set-up included with uv's package cache already filled" in text
    # 20 s around the 2 stages that ran, 10 s each; the 2 skipped: 60 s of work + 2 x 10 s around them
    assert "about 10 s around each stage" in text
    assert "DVC skipped 2 stages in that run" in text and "about 1 min more at their earlier times" in text
    assert "training 10 min" in text  # the skipped stages' times are not counted as this run's
    one = " ".join(repro_cost({**timing, "carried_over": ["compare"]}).split())  # 30 s of work and the time around it
    assert "DVC skipped 1 stage in that run (compare), its inputs unchanged" in one
    assert re.search(r"runs it too, about \d+ s more at its earlier time\.", one), one
    quiet = " ".join(repro_cost({**timing, "carried_over": [], "package_cache": None}).split())
    assert "skipped" not in quiet and "package cache" not in quiet


def test_dev_evaluation_time_is_read_per_stage_from_the_step_and_dev_lines():
    """Scoring selection-dev is part of a training stage's time: from a step's loss line to that step's dev
    line, summed over a stage's evaluations and runs, across midnight; a stage whose runs trained side by side
    (its lines carry ``[seed N]``) is named, its sum being process-seconds; a dev line without its step line
    (a resumed run) counts nothing."""
    from benchmarks.stage_seconds import dev_eval_seconds

    log = "\n".join([
        "23:59:50.000 | INFO    | Flow run 'train_span' - step 100/200 loss 1.7171 lr 8.42e-05",
        "00:00:20.000 | INFO    | Flow run 'train_span' - step 100 dev f1 45.99 em 0.00 iou 20.45 (best so far)",
        "00:01:00.000 | INFO    | Flow run 'train_span' - step 200/200 loss 2.0940 lr 8.33e-07",
        "00:01:40.500 | INFO    | Flow run 'train_span' - step 200 dev f1 45.91 (best 45.99 at step 100)",
        "00:02:00.000 | INFO    | Flow run 'train_quail_mc@full' - [seed 43] INFO step 100/300 loss 1.4 lr 7e-05",
        "00:02:01.000 | INFO    | Flow run 'train_quail_mc@full' - [seed 42] INFO step 100/300 loss 1.4 lr 7e-05",
        "00:02:09.000 | INFO    | Flow run 'train_quail_mc@full' - [seed 42] INFO step 100 dev accuracy 29.86 (best so far)",
        "00:02:10.000 | INFO    | Flow run 'train_quail_mc@full' - [seed 43] INFO step 100 dev accuracy 31.00 (best so far)",
        "00:03:00.000 | INFO    | Flow run 'train_longformer' - step 10 dev f1 33.49 em 0.00 iou 13.05 (best so far)",
    ])
    seconds, side_by_side = dev_eval_seconds(log)
    assert seconds == {"train_span": 70.5, "train_quail_mc@full": 18.0}
    assert side_by_side == ["train_quail_mc@full"]
