"""Choices made on selection-dev by training the stage itself under each option: the head the yes/no and
multiple-choice models read the encoder with, and QuAIL's input budget.

Each arm is a DVC experiment of the stage (``dvc exp run --temp -n NAME -S ...``: the workspace is left as it
is), the same seeds, budget and data but for the one choice; its checkpoint-selection figures are read from its
training report (git-tracked, so the experiment's commit holds it). Selection-dev only: the held-out sets are
never read here. Arms are paired by seed (a seed draws the same selection-dev questions, batch order and head
initialisation under each), each difference against the first arm given with a t interval over seeds. An arm the
committed params already train (three seeds) is read from the committed report (``HEAD``), not trained again.

- ``heads``: ``pooling: pooler`` (BERT's dense layer over [CLS], transformers' default) against ``mean`` (the
  token states' mean, as the shipped MiniLM was trained; ``pipeline/training/pooling.py``) for QuAIL's full
  input, StrategyQA's facts control and the auxiliary BoolQ model -> ``benchmarks/results/head_selection.json``.
- ``quail_budget``: QuAIL's full input at 128, 256 and 384 tokens per option, with the share of each passage
  that fits the input at each budget (the sentence selection of ``pipeline/quail/passage_window.py`` included)
  -> ``benchmarks/results/quail_budget_selection.json``.
- ``class_balance``: the auxiliary BoolQ model (62% "yes") trained on its examples as they are (``none``) against
  ``oversample`` (the rarer answer repeated; ``pipeline/training/class_balance.py``), by dev AUC
  -> ``benchmarks/results/class_balance_selection.json``.

Run: ``python -m benchmarks.selection_dev heads|quail_budget|class_balance [--run]``: ``--run`` trains the experiments not yet
in ``dvc exp list`` first (a finished one is not trained again: a killed study resumes at the one it was in).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks._common import write_result

REPO = Path(__file__).resolve().parents[1]
SEEDS = [42, 43, 44]


@dataclass(frozen=True)
class Arm:
    """One option of one study: a DVC experiment (``sets``), or the committed report (``exp`` None)."""

    label: str
    exp: str | None
    sets: tuple[str, ...] = ()


@dataclass(frozen=True)
class Study:
    name: str
    target: str
    report: str  # the training report, git-tracked (cache: false), so an experiment's commit holds it
    runs_key: str  # where the report lists its runs
    metric: str  # the section's select_metric: what the kept checkpoint is chosen by
    arms: tuple[Arm, ...] = field(default_factory=tuple)


HEADS = (
    Study("quail_mc", "train_quail_mc@full", "reports/train_quail_mc_full.json", "runs", "accuracy",
          (Arm("pooler", None), Arm("mean", "head-quail-mean", ("quail_mc.pooling=mean",)))),
    Study("strategyqa_qa", "train_strategyqa_qa@ctl_facts", "reports/train_strategyqa_qa_ctl_facts.json", "runs",
          "auc",
          (Arm("pooler", "head-facts-pooler", (f"strategyqa_qa.seeds={SEEDS}", "strategyqa_qa.parallel_runs=1")),
           Arm("mean", "head-facts-mean", (f"strategyqa_qa.seeds={SEEDS}", "strategyqa_qa.pooling=mean")))),
    Study("boolq_aux", "train_boolq_aux", "reports/boolq_aux.json", "training_per_seed", "auc",
          (Arm("pooler", "head-boolq-pooler", (f"boolq_aux.seeds={SEEDS}",)),
           Arm("mean", "head-boolq-mean", (f"boolq_aux.seeds={SEEDS}", "boolq_aux.pooling=mean")))),
)
QUAIL_BUDGETS = (128, 256, 384)
QUAIL_BUDGET = (
    Study("quail_mc", "train_quail_mc@full", "reports/train_quail_mc_full.json", "runs", "accuracy",
          tuple(Arm(str(n), None if n == 128 else f"quail-budget-{n}", (f"quail_mc.max_seq_len={n}",))
                for n in QUAIL_BUDGETS)),
)
CLASS_BALANCE = (
    Study("boolq_aux", "train_boolq_aux", "reports/boolq_aux.json", "training_per_seed", "auc",
          (Arm("none", "balance-boolq-none", (f"boolq_aux.seeds={SEEDS}",)),
           Arm("oversample", "balance-boolq-oversample", (f"boolq_aux.seeds={SEEDS}",
                                                          "boolq_aux.class_balance=oversample")))),
)
STUDIES = {"heads": ("head_selection", HEADS), "quail_budget": ("quail_budget_selection", QUAIL_BUDGET),
           "class_balance": ("class_balance_selection", CLASS_BALANCE)}


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def experiment_revs() -> dict[str, str]:
    """``{experiment name: commit}`` of every DVC experiment in this repository (``refs/exps/...``)."""
    out = _git("for-each-ref", "--format=%(refname) %(objectname)", "refs/exps")
    return {ref.rsplit("/", 1)[1]: rev for ref, rev in (line.split() for line in out.splitlines())}


def run_missing(studies: tuple[Study, ...]) -> None:
    have = experiment_revs()
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""))
    for study in studies:
        for arm in study.arms:
            if arm.exp is None or arm.exp in have:
                continue
            cmd = ["dvc", "exp", "run", "--temp", "-n", arm.exp,
                   *[a for s in arm.sets for a in ("-S", s)], study.target]
            print("$", " ".join(cmd), flush=True)
            subprocess.run(cmd, cwd=REPO, env=env, check=True)


def _runs(study: Study, arm: Arm, revs: dict[str, str]) -> dict[int, dict]:
    rev = "HEAD" if arm.exp is None else revs.get(arm.exp)
    if rev is None:
        raise SystemExit(f"experiment {arm.exp} not found: python -m benchmarks.head_selection --run")
    report = json.loads(_git("show", f"{rev}:{study.report}"))
    return {r["seed"]: r for r in report[study.runs_key]}


def paired(a: list[float], b: list[float]) -> dict:
    """Mean of b - a over seeds with a 95% t interval (``scipy.stats``); None where fewer than 2 pairs."""
    from scipy import stats

    diff = [y - x for x, y in zip(a, b, strict=True)]
    out = {"mean": round(statistics.mean(diff), 3), "per_seed": [round(d, 3) for d in diff]}
    if len(diff) > 1:
        half = stats.t.ppf(0.975, len(diff) - 1) * statistics.stdev(diff) / len(diff) ** 0.5
        out["ci95"] = [round(out["mean"] - half, 3), round(out["mean"] + half, 3)]
    return out


def summarise(study: Study, revs: dict[str, str]) -> dict:
    arms = {arm.label: _runs(study, arm, revs) for arm in study.arms}
    seeds = sorted(set.intersection(*(set(r) for r in arms.values())))
    figures = sorted({k for runs in arms.values() for seed in seeds for k in runs[seed]["dev_best"]})
    out: dict = {"target": study.target, "select_metric": study.metric, "seeds": seeds,
                 "source": {a.label: a.exp or "HEAD (committed report)" for a in study.arms}, "arms": {}}
    for label, runs in arms.items():
        out["arms"][label] = {
            "best_step": [runs[s]["best_step"] for s in seeds],
            "dev_best": {k: [runs[s]["dev_best"][k] for s in seeds] for k in figures},
            "dev_best_mean": {k: round(statistics.mean(runs[s]["dev_best"][k] for s in seeds), 3) for k in figures},
            "final_loss": [runs[s].get("final_loss") for s in seeds],
            "dev_questions": sorted({runs[s].get("dev_questions") for s in seeds} - {None}),
        }
    first, *others = list(arms)
    out["minus_" + first] = {label: {k: paired([arms[first][s]["dev_best"][k] for s in seeds],
                                               [arms[label][s]["dev_best"][k] for s in seeds]) for k in figures}
                             for label in others}
    sign = -1 if study.metric == "log_loss" else 1
    out["best"] = max(arms, key=lambda label: sign * out["arms"][label]["dev_best_mean"][study.metric])
    return out


def passage_fit(budgets: tuple[int, ...] = QUAIL_BUDGETS) -> dict:
    """Per budget, over the questions the full-input model trains and selects on (the training share of the
    dev texts): the share whose input holds less than the whole passage, and the mean share of the passage's
    tokens the input holds (after the sentence selection, which keeps the most related sentences first)."""
    from transformers import AutoTokenizer

    from pipeline.params import load_params
    from pipeline.quail.mc_model import encode_questions
    from pipeline.quail.sets import quail_sets
    from pipeline.training.model_names import resolve_model_path

    params = load_params()
    _, train = quail_sets(params.quail.train_share, params.quail.seed, params.quail.exclude_from_heldout)
    tok = AutoTokenizer.from_pretrained(resolve_model_path(params.quail_mc.model_name_or_path))
    whole = [len(ids) - 2 for ids in tok([q.context for q in train], verbose=False)["input_ids"]]
    out = {"questions": len(train), "passage_tokens_mean": round(statistics.mean(whole), 1)}
    for n in budgets:
        feats = encode_questions(tok, train, "full", n)
        per_row = len(train[0].options)
        held = [sum(1 for t in feats.token_type_ids[i * per_row] if t == 0) - 2 for i in range(len(train))]
        out[str(n)] = {"cut_share": round(sum(h < w for h, w in zip(held, whole, strict=True)) / len(train), 4),
                       "passage_tokens_held_share": round(statistics.mean(
                           min(1.0, h / w) for h, w in zip(held, whole, strict=True)), 4),
                       "inputs_truncated_share": round(feats.truncated / len(feats), 4)}
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("study", choices=list(STUDIES))
    ap.add_argument("--run", action="store_true", help="train the experiments not yet in dvc exp list first")
    args = ap.parse_args(argv)
    result_name, studies = STUDIES[args.study]
    if args.run:
        run_missing(studies)
    revs = experiment_revs()
    result = {"note": "selection-dev figures at each run's kept checkpoint (dev_best), each arm against the first, "
                      "paired by seed; best: the arm with the better mean of the section's select_metric",
              "commit": _git("rev-parse", "--short", "HEAD").strip(),
              "studies": {s.name: summarise(s, revs) for s in studies}}
    if args.study == "quail_budget":
        result["passage_fit"] = passage_fit()
    write_result(result_name, result)


if __name__ == "__main__":
    main()
