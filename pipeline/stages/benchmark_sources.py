"""``benchmark_sources``: the published benchmark files, read in place: checked, fingerprinted, or reported
missing.

Nothing is copied into the project. Under ``dvc repro`` the files are deps of this stage (a missing one stops
DVC naming it); the manifest it writes is what downstream stages depend on, so a changed file (new checksum)
reruns them. Called outside DVC, a missing file is recorded with the reason and the stages that need it say
they were skipped and why.
"""

from __future__ import annotations

from pathlib import Path

from pipeline.common.manifest import MANIFEST, sha256
from pipeline.common.runtime import get_logger, write_json
from pipeline.params import BenchmarkSourcesParams, Params
from pipeline.quail.sources import describe_paper_tables, describe_question_set
from pipeline.strategyqa.sources import describe_paragraphs, describe_questions

WHERE = {
    "strategyqa_train": "github.com/eladsegal/strategyqa data/strategyqa/train.json",
    "strategyqa_eval": "github.com/eladsegal/strategyqa data/strategyqa/dev.json",
    "quail_dev": "github.com/text-machine-lab/quail quail_v1.3/xml/randomized/quail_1.3_dev_randomized.xml",
    "quail_challenge": "github.com/text-machine-lab/quail quail_v1.3/json/challenge.jsonl",
    "quail_paper_tables": "Rogers et al. (AAAI 2020) Tables 3-5, transcribed as quail_rogers2020_tables.json",
    "strategyqa_paragraphs": "the StrategyQA release's strategyqa_train_paragraphs.json (allenai/strategyqa)",
}
DESCRIBE = {"strategyqa_train": describe_questions, "strategyqa_eval": describe_questions,
            "quail_dev": describe_question_set, "quail_challenge": describe_question_set,
            "quail_paper_tables": describe_paper_tables, "strategyqa_paragraphs": describe_paragraphs}


def describe(kind: str, path_str: str) -> dict:
    """``{"path", "sha256", "questions", ...}`` for a present, parseable file; ``{"path", "skipped"}`` if absent.
    A file that is present but malformed raises: that is a mistake to fix, not a reason to skip."""
    path = Path(path_str)
    if not path.exists():
        return {"path": path_str, "skipped": f"{path_str} not found; get it from {WHERE[kind]} and set "
                                             f"benchmark_sources.{kind} to its path"}
    return {"path": path_str, "sha256": sha256(path), **DESCRIBE[kind](path)}


def build_manifest(p: BenchmarkSourcesParams) -> dict:
    return {name: describe(name, value) for name, value in p.model_dump().items()}


def run(params: Params) -> dict:
    manifest = build_manifest(params.benchmark_sources)
    for name, entry in manifest.items():
        if entry.get("skipped"):
            get_logger().warning("%s: skipped - %s", name, entry["skipped"])
    write_json(MANIFEST, manifest)
    return manifest
