"""The published benchmark files, read in place: checked, fingerprinted, or reported missing.

Nothing is copied into the project. Under ``dvc repro`` the files are deps of the ``benchmark_sources`` stage (a
missing one stops DVC naming it); the manifest this writes is what downstream stages depend on, so a changed
file (new checksum) reruns them. Called outside DVC, a missing file is recorded with the reason and the stages
that need it say they were skipped and why.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from pipeline.params import BenchmarkSourcesParams

MANIFEST = Path("reports/benchmark_sources.json")
WHERE = {
    "strategyqa_train": "github.com/eladsegal/strategyqa data/strategyqa/train.json",
    "strategyqa_eval": "github.com/eladsegal/strategyqa data/strategyqa/dev.json",
    "quail_dev": "github.com/text-machine-lab/quail quail_v1.3/xml/randomized/quail_1.3_dev_randomized.xml",
    "quail_challenge": "github.com/text-machine-lab/quail quail_v1.3/json/challenge.jsonl",
    "quail_paper_tables": "Rogers et al. (AAAI 2020) Tables 3-5, transcribed as quail_rogers2020_tables.json",
    "strategyqa_paragraphs": "the StrategyQA release's strategyqa_train_paragraphs.json (allenai/strategyqa)",
}


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def describe(kind: str, path_str: str) -> dict:
    """``{"path", "sha256", "questions", ...}`` for a present, parseable file; ``{"path", "skipped"}`` if absent.
    A file that is present but malformed raises: that is a mistake to fix, not a reason to skip."""
    path = Path(path_str)
    if not path.exists():
        return {"path": path_str, "skipped": f"{path_str} not found; get it from {WHERE[kind]} and set "
                                             f"benchmark_sources.{kind} to its path"}
    entry: dict = {"path": path_str, "sha256": sha256(path)}
    if kind == "quail_paper_tables":
        from pipeline.quail.report import load_reference, paper_rows

        ref = load_reference(path)
        entry.update(systems={s: sorted(paper_rows(ref, s)) for s in ("dev", "challenge")})
    elif kind == "strategyqa_paragraphs":
        from pipeline.strategyqa.data import load_paragraphs

        entry.update(paragraphs=len(load_paragraphs(path)))
    elif kind.startswith("quail"):
        from pipeline.quail.data import load_quail

        qs = load_quail(path)
        entry.update(questions=len(qs), texts=len({q.text_id for q in qs}),
                     keyed=sum(q.answer is not None for q in qs),
                     by_type=dict(sorted(Counter(q.question_type for q in qs).items())),
                     by_domain=dict(sorted(Counter(q.domain for q in qs).items())))
    else:
        from pipeline.strategyqa.data import load_questions

        qs = load_questions(path)
        entry.update(questions=len(qs), yes=sum(q.answer is True for q in qs), no=sum(q.answer is False for q in qs))
    return entry


def build_manifest(p: BenchmarkSourcesParams) -> dict:
    return {name: describe(name, value) for name, value in p.model_dump().items()}


def read_manifest(path: Path = MANIFEST) -> dict:
    if not path.exists():
        raise FileNotFoundError(f"{path} missing: run the benchmark_sources stage first (dvc repro benchmark_sources)")
    return json.loads(path.read_text(encoding="utf-8"))


def skipped(manifest: dict, *names: str) -> str | None:
    """The first skip reason among ``names``, or None when all are present."""
    return next((manifest[n]["skipped"] for n in names if manifest.get(n, {}).get("skipped")), None)
