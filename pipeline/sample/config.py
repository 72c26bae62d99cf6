"""The ``sample`` section of params.yaml: what the offline archive and dump hold."""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Science


class SampleParams(StrictModel):
    """The offline sample sources (``sample`` stage): archived BBC pages and a CirrusSearch dump."""

    seed: Science[int]
    n_articles: Science[int] = Field(ge=10, le=5000, description="distinct BBC article pages to write")
    duplicate_captures: Science[int] = Field(ge=0, description="extra captures of already written articles")
    cross_domain_duplicates: Science[int] = Field(ge=0, description="articles also captured under bbc.com")
    non_article_pages: Science[int] = Field(ge=0, description="index, video, live and picture-gallery captures")
    out_of_range_captures: Science[int] = Field(
        ge=0, description="captures outside [start, end], to test range filters")
    start: Science[dt.date]
    end: Science[dt.date]
    sections_per_article: Science[tuple[int, int]]
    explainer_share: Science[float] = Field(ge=0.0, le=1.0, description="articles written as explainers, with question "
                                                             "sub-headings; the rest have statement sub-headings only")
    question_heading_share: Science[float] = Field(
        ge=0.0, le=1.0, description="an explainer's sub-headings that are questions")
    question_headings: Science[Literal["section", "story", "name_section"]] = Field(
        description="section: each question heading is written for its section without naming it (its function: "
                    "history, figures, outlook; else its subject's Wikipedia description); story: headings ask "
                    "about the story, or nothing in particular (templates, not written for the section); "
                    "name_section: a positive control, every question heading names its own section's subject, a "
                    "cue real headings seldom give")
    section_words: Science[tuple[int, int]] = Field(description="[low, high] words per section, drawn uniformly")
    bullet_section_share: Science[float] = Field(ge=0.0, le=1.0)
    links_per_article: Science[tuple[int, int]]
    wiki_articles: Science[int | None] = Field(
        ge=1, description="vital articles in the CirrusSearch dump; null = all 10,033")
    strategyqa_questions: Science[int] = Field(ge=0, description="generated StrategyQA-format questions")

    @model_validator(mode="after")
    def _check_ranges(self) -> "SampleParams":
        if self.start >= self.end:
            raise ValueError(f"start ({self.start}) must be before end ({self.end})")
        for name in ("sections_per_article", "links_per_article", "section_words"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi:
                raise ValueError(f"{name} must be [low, high] with 0 <= low <= high, got {[lo, hi]}")
        return self
