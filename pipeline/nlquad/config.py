"""NLQuAD's params sections: ``discover`` and ``extract`` (which captures are articles, and what a page may be
before the extractor refuses it), ``build_nlquad`` (crawl or release), ``split`` and ``nlquad_baselines``."""

from __future__ import annotations

import datetime as dt
import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science


class DiscoverParams(StrictModel):
    """CDX discovery of BBC News article captures (``discover`` stage)."""

    url_prefixes: Infrastructure[list[str]]
    start: Science[dt.date]
    end: Science[dt.date]
    article_pattern: Infrastructure[str] = Field(description="the article URL paths to collect (a regular expression)")
    exclude_pattern: Infrastructure[str | None] = Field(
        description="more paths to leave out, beyond the sections that are never "
                    "articles (the BBC URL rules, bbc_urls); null = none")
    limit: Science[int | None] = Field(ge=1, description="stop after this many article captures; null = all")
    page_size: Infrastructure[int] = Field(ge=1)

    @field_validator("article_pattern", "exclude_pattern")
    @classmethod
    def _check_regex(cls, value: str | None) -> str | None:
        if value is None:
            return value
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from None
        return value

    @model_validator(mode="after")
    def _check_dates(self) -> "DiscoverParams":
        if self.start > self.end:
            raise ValueError(f"start ({self.start}) must not be after end ({self.end})")
        return self


class ExtractParams(StrictModel):
    """Extraction and de-duplication of crawled pages (``extract`` stage)."""

    keep: Science[Literal["earliest", "latest"]] = Field(
        description="which capture of a duplicated article is kept: the first as published, or the last edit")
    min_words: Science[int] = Field(ge=0)
    max_page_bytes: Infrastructure[int] = Field(ge=1, description="larger pages are rejected as too_large")
    max_depth: Infrastructure[int] = Field(
        ge=10, description="deeper element nesting is rejected as too_deep (BBC pages: < 30)")
    max_elements: Infrastructure[int] = Field(
        ge=1000, description="pages of more elements are rejected as too_many_elements "
                             "(the real BBC fixtures: at most 1,405)")
    max_sections: Infrastructure[int] = Field(ge=1, description="pages of more sub-headed sections are rejected as "
                                                                "too_many_sections")
    bad_records: Infrastructure[Literal["fail", "skip"]] = Field(
        description="an unreadable WARC record fails the stage (file and offset named); skip: go on and list "
                    "the lost records in reports/extract.json")


class BuildNLQuADParams(StrictModel):
    """Where the NLQuAD data set comes from (``build_nlquad`` stage)."""

    source: Infrastructure[Literal["crawl", "release"]] = Field(
        description="crawl: the extracted pages' question sub-headings; release: the NLQuAD release files in "
                    "paths.build_nlquad.release_dir, with their own split")


class SplitParams(StrictModel):
    """Article-level train/dev/test split of NLQuAD (``split`` stage)."""

    seed: Science[int]
    ratios: Science[dict[str, float]]
    group_key: Science[str] = Field(description="article field that keeps an article's questions together")

    @field_validator("ratios")
    @classmethod
    def _check_ratios(cls, value: dict[str, float]) -> dict[str, float]:
        if set(value) != {"train", "dev", "test"}:
            raise ValueError(f"needs exactly train, dev and test, got {sorted(value)}")
        if any(v <= 0 for v in value.values()) or abs(sum(value.values()) - 1.0) > 1e-6:
            raise ValueError(f"must be positive and sum to 1, got {value}")
        return value


class NLQuADBaselineParams(StrictModel):
    """NLQuAD window baselines (``nlquad_baselines`` stage)."""

    window_words: Science[int] = Field(ge=1, le=100_000)
    seed: Science[int]
    eval_split: Science[Literal["dev", "test"]]
