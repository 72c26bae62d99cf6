"""Paragraphs from a CirrusSearch dump: the ``wiki`` section of params.yaml."""

from __future__ import annotations

from pydantic import Field

from pipeline.common.strict_model import StrictModel
from pipeline.common.trust import Infrastructure, Science


class WikiParams(StrictModel):
    """Paragraphs from a CirrusSearch content dump (``wiki_paragraphs`` stage)."""

    dump: Infrastructure[str] = Field(description="a *-cirrussearch-content.json.gz; live: a dumps.wikimedia.org file")
    min_chars: Science[int] = Field(ge=1, description="shorter paragraphs are dropped")
    strategyqa_evidence: Science[bool] = Field(
        description="add StrategyQA's evidence paragraphs (benchmark_sources.strategyqa_paragraphs) to the corpus, "
                    "replacing a dump paragraph of the same id; false for a full 2020-05-11 dump, which holds them "
                    "already")
    workers: Infrastructure[int] = Field(
        ge=0, le=1024, description="processes parsing wikitext; 0 = every core. The output "
                                   "is the same for any count (articles keep dump order)")
    max_document_bytes: Infrastructure[int] = Field(
        ge=1000, description="a dump line (one document) longer than this is "
                             "skipped, counted as oversized_documents")
