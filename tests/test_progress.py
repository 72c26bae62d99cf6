"""Long work says how far it is: log lines with the count, rate and time left (what the Prefect UI shows)."""

from __future__ import annotations

import logging
import re

from pipeline.common.logs import ProgressReport, progress


def test_progress_lines_carry_count_rate_and_time_left(caplog, monkeypatch):
    monkeypatch.setenv("QA_PIPELINE_PROGRESS_EVERY_S", "0")
    with caplog.at_level(logging.INFO, logger="qa_pipeline"):
        assert list(progress(range(10), "index", unit="docs")) == list(range(10))
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("index:")]
    assert len(lines) >= 10  # every item at a 0 s interval, plus the closing line
    assert re.fullmatch(r"index: 3/10 docs \(30%\), [\d,.]+ docs/s, \d+:\d\d elapsed, about \d+:\d\d left", lines[2]), lines[2]
    assert lines[-1].startswith("index: 10/10 docs (100%)") and "left" not in lines[-1]


def test_without_a_total_the_line_has_count_and_rate_only(caplog):
    report = ProgressReport("crawl", None, "captures", every_s=0)
    with caplog.at_level(logging.INFO, logger="qa_pipeline"):
        report.set(5)
    (line,) = [r.getMessage() for r in caplog.records if r.getMessage().startswith("crawl:")]
    assert re.fullmatch(r"crawl: 5 captures, [\d,.]+ captures/s, \d+:\d\d elapsed", line), line


def test_lines_are_spaced_by_the_interval(caplog):
    report = ProgressReport("train", 100, "steps", every_s=3600)
    with caplog.at_level(logging.INFO, logger="qa_pipeline"):
        for _ in range(50):
            report.update()
    assert not [r for r in caplog.records if r.getMessage().startswith("train:")]


def test_the_progress_artifact_gets_a_readable_share(monkeypatch):
    """The Prefect UI showed "13.333333333333334%": the share sent is rounded to a tenth."""
    import prefect.artifacts

    from pipeline.common import logs as runtime

    sent = []
    report = ProgressReport("index", 15, "docs", every_s=0)  # its logger: a plain one, outside a run
    monkeypatch.setattr(runtime, "in_prefect_run", lambda: True)
    monkeypatch.setattr(prefect.artifacts, "create_progress_artifact", lambda progress, description: sent.append(progress) or "id")
    monkeypatch.setattr(prefect.artifacts, "update_progress_artifact", lambda artifact_id, progress: sent.append(progress))
    for _ in range(3):
        report.update()
    assert sent[:2] == [6.7, 13.3] and all(round(x, 1) == x for x in sent)


def test_a_loop_run_twice_in_one_stage_gets_two_named_cards(monkeypatch):
    """QuAIL's predict stage predicts the held-out dev set, then the challenge set: the UI showed two identical
    "predict" cards. The second of a name in one process is "predict (2)"."""
    import collections

    import prefect.artifacts

    from pipeline.common import logs as runtime

    names = []
    reports = [ProgressReport("predict", 4, "batch", every_s=0) for _ in range(2)]  # plain loggers, outside a run
    monkeypatch.setattr(runtime, "_CARDS", collections.Counter())
    monkeypatch.setattr(runtime, "in_prefect_run", lambda: True)
    monkeypatch.setattr(prefect.artifacts, "create_progress_artifact",
                        lambda progress, description: names.append(description) or "id")
    monkeypatch.setattr(prefect.artifacts, "update_progress_artifact", lambda artifact_id, progress: None)
    for report in reports:
        for _ in range(4):
            report.update()
    assert names == ["predict", "predict (2)"]


def test_a_dev_evaluation_inside_training_says_how_far_it_is_and_makes_no_card(caplog, monkeypatch):
    """A dev evaluation of long windows ran up to two minutes on a CPU without a line: it now logs its batches
    as prediction does, and adds no Prefect progress card (a run evaluates many times)."""
    import prefect.artifacts
    import torch

    from pipeline.common import logs as runtime
    from pipeline.training.batches import model_outputs

    cards = []
    monkeypatch.setenv("QA_PIPELINE_PROGRESS_EVERY_S", "0")
    monkeypatch.setattr(runtime, "in_prefect_run", lambda: True)
    monkeypatch.setattr(runtime, "get_logger", lambda: logging.getLogger("qa_pipeline"))  # a run's, as a plain one
    monkeypatch.setattr(prefect.artifacts, "create_progress_artifact",
                        lambda progress, description: cards.append(description) or "id")

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x * self.w

    def batch(idx, tokenizer, types):
        return {"x": torch.tensor(idx, dtype=torch.float)}

    with caplog.at_level(logging.INFO, logger="qa_pipeline"):
        outs = list(model_outputs(Model(), None, 10, batch, 2))
    assert len(outs) == 5
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("dev evaluation:")]
    assert lines and lines[-1].startswith("dev evaluation: 5/5 batch (100%)"), lines
    assert cards == []
