"""``benchmark_sources``: the published benchmark files, read in place: checked and fingerprinted.

Nothing is copied into the project. Under ``dvc repro`` the files are deps of this stage (a missing one stops
DVC naming it); the manifest it writes is what downstream stages depend on, so a changed file (new checksum)
reruns them. Run outside DVC, a missing file fails this stage the same way, naming every missing file, where to
get it and the param that points at it; the manifest is not written, so no stage downstream runs on a partial
set (``pipeline/common/manifest.py`` says why there is no "skipped" output).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pathlib import Path

from pipeline.common.manifest import MANIFEST, entry_path, sha256
from pipeline.common.files import write_json
from pipeline.quail.sources import describe_paper_tables, describe_question_set
from pipeline.strategyqa.sources import describe_paragraphs, describe_questions

if TYPE_CHECKING:
    from pipeline.common.config import BenchmarkSourcesParams
    from pipeline.params import Params

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


class MissingBenchmarkFiles(FileNotFoundError):
    pass


def describe(kind: str, path_str: str) -> dict:
    """``{"path", "sha256", "questions", ...}`` for a present, parseable file. A file that is present but
    malformed raises, naming the file and record."""
    path = Path(path_str)
    return {"path": path_str, "sha256": sha256(path), **DESCRIBE[kind](path)}


def build_manifest(p: BenchmarkSourcesParams) -> dict:
    sources = p.model_dump()
    missing = [f"  benchmark_sources.{name}: {value} not found (get it from {WHERE[name]})"
               for name, value in sources.items() if not Path(value).is_file()]
    if missing:
        raise MissingBenchmarkFiles("benchmark files missing; set each param to your copy, or run only the "
                                    "stages of the tracks you have (e.g. dvc repro evaluate_span):\n"
                                    + "\n".join(missing))
    return {name: describe(name, value) for name, value in sources.items()}


def run(params: Params) -> dict:
    manifest = build_manifest(params.benchmark_sources)
    for name, entry in manifest.items():  # each stage depends on the entries of the files it reads
        write_json(entry_path(name), entry)
    write_json(MANIFEST, manifest)
    return manifest
