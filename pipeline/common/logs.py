"""Logging and progress for stages: Prefect's run logger inside a flow (so the UI shows the lines), the standard
library outside one (tests, notebooks), and progress lines with rate and time left.

Nothing here writes a file or returns data a stage writes: it is outside every stage's code deps
(``pipeline.experiments.stage_deps`` does not follow it; a test checks that it opens no file)."""

from __future__ import annotations

import collections
import logging
import os
import time
from collections.abc import Iterable, Iterator
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def in_prefect_run() -> bool:
    """True inside a Prefect flow or task run (prefect is optional for library use)."""
    try:
        from prefect.context import FlowRunContext, TaskRunContext
    except ImportError:
        return False
    return bool(TaskRunContext.get() or FlowRunContext.get())


def get_logger(name: str = "qa_pipeline") -> logging.Logger | logging.LoggerAdapter:
    """Prefect's run logger inside a flow or task run, a plain logger outside one."""
    if in_prefect_run():
        from prefect.logging import get_run_logger

        return get_run_logger()
    logger = logging.getLogger(name)
    if not logging.getLogger().handlers and not logger.handlers:
        logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return logger


PROGRESS_EVERY_ENV = "QA_PIPELINE_PROGRESS_EVERY_S"


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 else \
        f"{seconds // 60}:{seconds % 60:02d}"


_CARDS: collections.Counter[str] = collections.Counter()  # progress artifacts made in this process, by name


class ProgressReport:
    """Where a user looks: a log line every ``QA_PIPELINE_PROGRESS_EVERY_S`` seconds (default 20) with the count,
    the rate and, when the total is known, the share done and the time left; inside a Prefect flow run the
    lines go to the run's log in the UI and a progress artifact (``create_progress_artifact``) moves with
    them. The tqdm bar on stderr is for a terminal and is off under ``QA_PIPELINE_NO_PROGRESS``."""

    def __init__(self, desc: str, total: int | None = None, unit: str = "it", every_s: float | None = None,
                 artifact: bool = True):
        self.desc, self.total, self.unit, self.with_artifact = desc, total, unit, artifact
        self.every_s = float(os.environ.get(PROGRESS_EVERY_ENV) or 20.0) if every_s is None else every_s
        self.n, self.t0 = 0, time.monotonic()
        self._last = self.t0
        self._artifact_id = None
        self._log = get_logger()

    def line(self) -> str:
        elapsed = max(time.monotonic() - self.t0, 1e-9)
        rate = self.n / elapsed
        text = f"{self.desc}: {self.n:,}" + (f"/{self.total:,}" if self.total else "") + f" {self.unit}"
        if self.total:
            text += f" ({100 * self.n / self.total:.0f}%)"
        text += f", {rate:,.1f} {self.unit}/s, {_duration(elapsed)} elapsed"
        if self.total and rate > 0 and self.n < self.total:
            text += f", about {_duration((self.total - self.n) / rate)} left"
        return text

    def _artifact(self) -> None:
        if not self.total or not self.with_artifact or not in_prefect_run():
            return
        share = round(min(100.0, 100.0 * self.n / self.total), 1)  # the UI shows it as given: 13.3, not 13.333333333333334
        try:
            from prefect.artifacts import (
                create_progress_artifact,
                update_progress_artifact,
            )

            if self._artifact_id is None:
                _CARDS[self.desc] += 1  # a second pass of the same loop in one run gets its own name
                seen = _CARDS[self.desc]
                self._artifact_id = create_progress_artifact(
                    progress=share, description=self.desc if seen == 1 else f"{self.desc} ({seen})")
            else:
                update_progress_artifact(self._artifact_id, progress=share)
        except Exception as exc:  # noqa: BLE001 - progress display must never fail the stage
            self._log.debug("progress artifact not updated: %s", exc)

    def update(self, n: int = 1) -> None:
        self.set(self.n + n)

    def set(self, n: int) -> None:
        """The count so far (for work counted elsewhere, e.g. captures a crawler subprocess stored)."""
        self.n = n
        now = time.monotonic()
        if now - self._last >= self.every_s:
            self._last = now
            self._log.info(self.line())
            self._artifact()

    def close(self) -> None:
        self._log.info(self.line())
        self._artifact()


def progress(iterable: Iterable[T], desc: str, total: int | None = None, unit: str = "it",
             artifact: bool = True) -> Iterator[T]:
    """Iterate with a ``ProgressReport`` (log lines with counts, rate and ETA; a Prefect progress artifact unless
    ``artifact`` is false: a pass repeated many times in one run, as a dev evaluation, would add a card each time)
    and a tqdm bar on stderr unless QA_PIPELINE_NO_PROGRESS is set."""
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)  # type: ignore[arg-type]
    report = ProgressReport(desc, total, unit, artifact=artifact)
    disable = bool(os.environ.get("QA_PIPELINE_NO_PROGRESS"))
    for item in tqdm(iterable, desc=desc, total=total, unit=unit, disable=disable, mininterval=1.0, leave=False):
        yield item
        report.update()
    report.close()
