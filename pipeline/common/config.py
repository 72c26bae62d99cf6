"""Where the published benchmark files are read: the ``benchmark_sources`` section, whose keys name the
manifest's entries (``pipeline.common.manifest``)."""

from __future__ import annotations

from pydantic import Field

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure


class BenchmarkSourcesParams(StrictModel):
    """Where the published benchmark files are read (``benchmark_sources`` stage, whose DVC deps they are).
    Nothing is copied: the stage records each file's checksum, so a changed file reruns what reads it."""

    strategyqa_train: Infrastructure[str]
    strategyqa_eval: Infrastructure[str]
    quail_dev: Infrastructure[str] = Field(description="QuAIL dev, .xml or .jsonl")
    quail_challenge: Infrastructure[str] = Field(description=".xml or .jsonl")
    quail_paper_tables: Infrastructure[str] = Field(description="the QuAIL paper's Tables 3-5, transcribed")
    strategyqa_paragraphs: Infrastructure[str] = Field(
        description="StrategyQA's evidence paragraphs (2020-05-11 Wikipedia)")
