"""What a training run did, step by step, and its DVCLive log.

``TrainingHistory`` is the run's record (loss and learning rate per step, dev figures per evaluation, the best
evaluation so far). It is saved in every checkpoint, so a resumed run reports, selects and logs exactly what an
uninterrupted one does. ``TrainingCurves`` writes it with DVCLive, the DVC project's own logger, into one folder
per model: ``plots/metrics/train/{loss,learning_rate}.tsv`` and ``plots/metrics/dev/<figure>.tsv`` (step and
value, no timestamps, so the same params give the same files) and ``metrics.json`` (last values and the best
evaluation). ``dvc plots show`` draws the curves from those files (the plots in ``dvc.yaml``).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pipeline.common.seed_runs import SEEDS_DIR

RECENT = 10  # steps the reported "final loss" averages over

@dataclass
class TrainingHistory:
    losses: list[float] = field(default_factory=list)
    learning_rates: list[float] = field(default_factory=list)
    evals: list[dict[str, Any]] = field(default_factory=list)  # {"step": int, "figures": {name: value}}
    best_step: int | None = None
    best_value: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {"losses": self.losses, "learning_rates": self.learning_rates, "evals": self.evals,
                "best_step": self.best_step, "best_value": self.best_value}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TrainingHistory":
        losses = [float(x) for x in data["losses"]]
        # checkpoints written before learning rates were recorded have none: such a run is not resumed across
        # the change anyway (the training code's hash is part of the fingerprint)
        return cls(losses, [float(x) for x in data.get("learning_rates", [])], list(data.get("evals", [])),
                   data.get("best_step"), data.get("best_value"))

    def add_step(self, loss: float, learning_rate: float) -> None:
        self.losses.append(loss)
        self.learning_rates.append(learning_rate)

    def recent_loss(self) -> float:
        window = self.losses[-RECENT:]
        return sum(window) / len(window) if window else float("nan")

    def add_eval(self, step: int, figures: dict[str, float], metric: str) -> bool:
        """Record an evaluation; True when it beats every earlier one on ``metric`` (ties keep the earlier)."""
        if metric not in figures:
            raise KeyError(f"select_metric {metric!r} is not among the dev figures {sorted(figures)}")
        self.evals.append({"step": step, "figures": {k: round(float(v), 4) for k, v in figures.items()}})
        value = float(figures[metric])
        if self.best_value is None or value > self.best_value:
            self.best_step, self.best_value = step, value
            return True
        return False

    def stopped_early(self, patience: int) -> bool:
        """``patience`` evaluations in a row after the best without beating it (0: never stop early)."""
        if patience == 0 or self.best_step is None:
            return False
        return sum(e["step"] > self.best_step for e in self.evals) >= patience

    def selection_summary(self, metric: str, patience: int) -> dict[str, Any]:
        if not self.evals:
            return {}
        best = next(e for e in self.evals if e["step"] == self.best_step)
        return {"select_metric": metric, "best_step": self.best_step, "dev_best": best["figures"],
                "dev_last": self.evals[-1]["figures"], "dev_evaluations": len(self.evals),
                "stopped_early": self.stopped_early(patience)}


class TrainingCurves:
    """A DVCLive log rebuilt from the history on start (a resumed run replays the steps it already took), then
    extended step by step. Only the main process of a multi-process run writes it."""

    def __init__(self, log_dir: Path, history: TrainingHistory, metric: str):
        from dvclive import Live

        # written under a temporary name and swapped in whole by close(): a run that fails leaves the last
        # complete log where it was (DVC keeps the folder: persist)
        self.log_dir = Path(log_dir)
        self.partial = self.log_dir.parent / f".{self.log_dir.name}.partial"
        shutil.rmtree(self.partial, ignore_errors=True)
        # no dvc.yaml of its own (the project's declares the plots), no experiment commit (DVC runs the stage),
        # no HTML report
        self.live = Live(str(self.partial), resume=False, save_dvc_exp=False, dvcyaml=None, report=None)
        self.metric = metric
        for step in range(1, len(history.losses) + 1):
            self.log_step(step, history)
        for i in range(len(history.evals)):
            self._log_eval(history.evals[i])

    def log_step(self, step: int, history: TrainingHistory) -> None:
        self.live.step = step
        self.live.log_metric("train/loss", round(history.losses[step - 1], 6))
        self.live.log_metric("train/learning_rate", history.learning_rates[step - 1])

    def _log_eval(self, evaluation: dict[str, Any]) -> None:
        self.live.step = evaluation["step"]
        for name, value in evaluation["figures"].items():
            self.live.log_metric(f"dev/{name}", value)

    def log_eval(self, step: int, history: TrainingHistory) -> None:
        self._log_eval(history.evals[-1])
        self._summary(history)

    def _summary(self, history: TrainingHistory) -> None:
        self.live.step = len(history.losses)
        if history.best_step is not None:
            best = next(e for e in history.evals if e["step"] == history.best_step)
            self.live.summary["best"] = {"step": history.best_step, self.metric: best["figures"][self.metric]}
        self.live.make_summary()

    def close(self, history: TrainingHistory) -> None:
        """The new log in place of the old one, entry by entry (``metrics.json``, ``plots/``: each swapped whole),
        leaving the other runs' curves in the folder (``seeds/<seed>/``, written by runs that may still be
        training beside this one: moving the whole folder lost them)."""
        self._summary(history)
        self.live.end()
        self.log_dir.mkdir(parents=True, exist_ok=True)
        written = sorted(self.partial.iterdir())
        for entry in written:
            target, old = self.log_dir / entry.name, self.log_dir / f".{entry.name}.old"
            _remove(old)
            if target.exists():
                target.rename(old)
            entry.rename(target)
            _remove(old)
        kept = {e.name for e in written} | {SEEDS_DIR}
        for stale in self.log_dir.iterdir():  # what the previous log had and this one does not
            if stale.name not in kept and not stale.name.startswith("."):
                _remove(stale)
        self.partial.rmdir()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)


REPORTED = ("steps", "max_steps", "final_loss", "select_metric", "best_step", "dev_best", "dev_last",
            "dev_evaluations", "stopped_early", "device", "precision", "attention_dropout",
            "attention_kernel")


VARYING = ("tokens_per_s_this_run", "resumed_from_step")  # logged by the stage, kept out of its outputs


def training_report(stats: dict[str, Any]) -> dict[str, Any]:
    """What a train stage writes of its run, for the stages after it: every statistic but those that vary
    from run to run (the speed, the step a resumed run started from), so its output's bytes follow the params."""
    return {k: v for k, v in stats.items() if k not in VARYING}


def training_summary(stats: dict[str, Any]) -> dict[str, Any]:
    """What a stage's report keeps of a training run (no timings: they vary run to run)."""
    return {k: stats[k] for k in REPORTED if k in stats}
