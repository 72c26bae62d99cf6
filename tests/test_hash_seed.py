"""No data stage's bytes depend on Python's hash seed: the NLQuAD chain after the crawl (``extract``,
``build_nlquad``, ``split``) and ``wiki_paragraphs``, run by their stage functions in two processes with
``PYTHONHASHSEED`` 0 and 3 on the session's small sample, write the same files. (Python salts ``str`` hashes per
process, so anything iterated out of a set or summed in its order can move between runs; ``sample`` and the QuAIL
baselines have tests of their own: tests/test_sample.py, tests/test_quail.py.)"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.common.layout import PATHS
from tests.params_files import write_params

pytestmark = pytest.mark.slow  # four stages twice, the calibration's encoder among them

STAGES = ("extract", "build_nlquad", "split", "wiki_paragraphs")
RUN = ("import sys; from pipeline.params import load_params; from pipeline.stage_table import run\n"
       "params = load_params(sys.argv[1])\n"
       "for stage in sys.argv[2:]:\n    run(stage, params, None)\n")


def _digests(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_data_stages_write_the_same_bytes_under_two_hash_seeds(small_sample, repo, tmp_path):
    from pipeline.sample.build import DUMP_NAME, WARC_NAME

    digests = []
    for seed in ("0", "3"):
        work = tmp_path / f"hash-{seed}"
        warc = work / PATHS.crawl.warc
        warc.parent.mkdir(parents=True)
        shutil.copy(small_sample / WARC_NAME, warc)  # what the crawl fetched: the sample's captures
        params = write_params(work / "params.yaml", {"wiki": {"dump": str(small_sample / DUMP_NAME),
                                                              "strategyqa_evidence": False}})
        done = subprocess.run([sys.executable, "-c", RUN, str(params), *STAGES], cwd=work, capture_output=True,
                              text=True, timeout=900,
                              env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(repo),
                                   "QA_PIPELINE_NO_PROGRESS": "1"})
        assert done.returncode == 0, done.stderr[-3000:]
        digests.append({**_digests(work / "data"), **{f"reports/{k}": v for k, v in _digests(work / "reports").items()}})
    assert len(digests[0]) > 8, sorted(digests[0])
    moved = sorted(k for k in digests[0].keys() | digests[1].keys() if digests[0].get(k) != digests[1].get(k))
    assert not moved, f"files that differ between hash seeds 0 and 3: {moved}"
