"""Peak RSS of the paragraph stage on a 1x and a 10x CirrusSearch dump: streaming means they are about equal.

Each size runs in a fresh subprocess (``resource.getrusage(RUSAGE_CHILDREN)`` gives its peak). The 10x dump
repeats the sample's articles under new titles, so it is 10x the bytes with the same kind of content.

    .venv/bin/python -m benchmarks.paragraphs_memory
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._common import scaled_dump, write_result
from pipeline.params import project_section
from pipeline.sample.build import DUMP_NAME, build_sample

CHILD = """
import sys, json
from collections import Counter
from pathlib import Path
from pipeline.wiki.paragraphs import dump_paragraphs
counts = Counter()
with open(sys.argv[2], "w") as out:
    for p in dump_paragraphs(Path(sys.argv[1]), counts, min_chars=2):
        out.write(json.dumps(p.__dict__) + "\\n")
print(json.dumps(counts))
"""


def measure(dump: Path, out: Path) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", CHILD, str(dump), str(out)], capture_output=True, text=True, check=True,
                          cwd=Path(__file__).resolve().parents[1])
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {"peak_rss_mib": round(peak_kib / 1024, 1), "seconds": round(time.perf_counter() - t, 1),
            "dump_mib": round(dump.stat().st_size / 2**20, 1), "paragraphs": json.loads(proc.stdout)["paragraphs"]}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        build_sample(project_section("sample"), tmp / "sample")
        one = tmp / "sample" / DUMP_NAME
        ten = tmp / "ten.json.gz"
        scaled_dump(one, ten, 10)
        # RUSAGE_CHILDREN is a running maximum over children: measure the smaller dump first
        r1 = measure(one, tmp / "p1.jsonl")
        r10 = measure(ten, tmp / "p10.jsonl")
    write_result("paragraphs_memory", {"1x": r1, "10x": r10, "rss_ratio_10x_over_1x": round(r10["peak_rss_mib"] / r1["peak_rss_mib"], 3),
                                       "target": "about 1 (constant memory)"})


if __name__ == "__main__":
    main()
