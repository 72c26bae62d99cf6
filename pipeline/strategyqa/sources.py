"""What the benchmark manifest records about the StrategyQA files: parsed with StrategyQA's own loaders, so a
file that is present but malformed stops the ``benchmark_sources`` stage."""

from __future__ import annotations

from pathlib import Path

from pipeline.strategyqa.data import load_paragraphs, load_questions


def describe_questions(path: Path) -> dict:
    qs = load_questions(path)
    return {"questions": len(qs), "yes": sum(q.answer is True for q in qs), "no": sum(q.answer is False for q in qs)}


def describe_paragraphs(path: Path) -> dict:
    return {"paragraphs": len(load_paragraphs(path))}
