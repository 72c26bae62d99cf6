"""All of Wikipedia: dump -> paragraphs -> searchable index, paragraphs/s against cores, extrapolated.

Measures on the sample CirrusSearch dump (10,033 vital articles, 24,047 paragraphs):
- the paragraph stage's parse (``dump_paragraphs``) with 1 worker and with every core (``wiki.workers``),
  its output checked equal; the single-process run is the named reference;
- the serial part that no worker count removes: reading, decompressing and decoding the dump in the main
  process (``iter_dump_documents``), as a ceiling in paragraphs/s;
- the embedded index (tantivy's own writer) with 1 thread and with every core (``search.index_threads``);
- peak memory of the parallel parse on the 1x dump and a 4x dump (constant memory means about equal).

Then extrapolates to the full StrategyQA corpus (36.6M paragraphs) on a 16-core machine: per-core rates from
here, times 16, times the parallel efficiency measured from 1 to 2 cores here (assumed to hold to 16), capped by
the serial reader. The sample's wikitext is lighter than real articles' (fewer templates and references), so
the same figure is also given at the issue's measured 1,300 paragraphs/s per core for real wikitext.

    .venv/bin/python -m benchmarks.wikipedia_scale
    python -m benchmarks.wikipedia_scale --dump DUMP --scale 10 --cores 1,2,4,8,16   # a 16-core machine
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path

from benchmarks._common import scaled_dump, write_result
from pipeline.search.tantivy_backend import TantivyBackend
from pipeline.wiki.paragraphs import (
    dump_paragraphs,
    iter_dump_documents,
    resolve_workers,
)

FULL_CORPUS = 36_600_000  # StrategyQA's Wikipedia paragraphs
TARGET_CORES = 16
REAL_WIKITEXT_PER_CORE = 1300.0  # paragraphs/s on one core for real enwiki wikitext (issue 14's measurement)

CHILD = """
import sys, json
from collections import Counter
from pathlib import Path
from pipeline.wiki.paragraphs import dump_paragraphs
if __name__ == "__main__":
    counts = Counter()
    n = sum(1 for _ in dump_paragraphs(Path(sys.argv[1]), counts, workers=int(sys.argv[2]), min_chars=2))
    print(json.dumps({"paragraphs": n}))
"""


def parse(dump: Path, workers: int) -> tuple[list[dict], float]:
    t = time.perf_counter()
    out = [asdict(p) for p in dump_paragraphs(dump, Counter(), workers=workers, min_chars=2)]
    return out, time.perf_counter() - t


def reader_ceiling(dump: Path, paragraphs: int) -> float:
    t = time.perf_counter()
    for _ in iter_dump_documents(dump, Counter()):
        pass
    return paragraphs / (time.perf_counter() - t)  # paragraphs/s the main process can hand out


def index_rate(docs: list[dict], threads: int, tmp: Path) -> float:
    backend = TantivyBackend(tmp / f"index-{threads}", threads=threads)
    t = time.perf_counter()
    backend.index({"id": d["id"], "title": d["title"], "text": d["text"]} for d in docs)
    return len(docs) / (time.perf_counter() - t)


def peak_rss_mib(dump: Path, workers: int, script: Path) -> float:
    """Peak RSS of the largest process of a parse in a fresh subprocess (main or a worker)."""
    path = os.pathsep.join(filter(None, [".", os.environ.get("PYTHONPATH")]))
    subprocess.run([sys.executable, str(script), str(dump), str(workers)], check=True, capture_output=True,
                   cwd=Path(__file__).resolve().parents[1], env={**os.environ, "PYTHONPATH": path})
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.wikipedia_scale")
    ap.add_argument("--dump", type=Path, help="a CirrusSearch dump (default: build the sample's)")
    ap.add_argument("--scale", type=int, default=1, help="repeat the dump's articles this many times")
    ap.add_argument("--cores", default="", help="worker/thread counts to measure, e.g. 1,2,4,8,16 "
                                                 "(default: 1 and every core)")
    ap.add_argument("--name", default="wikipedia_scale")
    ap.add_argument("--out-dir", type=Path, default=None)
    args = ap.parse_args(argv)
    cores_here = resolve_workers(0)
    counts = sorted({int(c) for c in args.cores.split(",") if c} or {1, cores_here})
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        dump = args.dump
        if dump is None:
            from pipeline.params import project_section
            from pipeline.sample.build import DUMP_NAME, build_sample

            build_sample(project_section("sample"), tmp / "sample")
            dump = tmp / "sample" / DUMP_NAME
        if args.scale > 1:
            scaled_dump(dump, tmp / "scaled.json.gz", args.scale)
            dump = tmp / "scaled.json.gz"
        reference, t1 = parse(dump, 1)
        n = len(reference)
        parse_rates = {1: n / t1}
        for c in counts:
            if c == 1:
                continue
            out, secs = parse(dump, c)
            assert out == reference, f"the parse with {c} workers differs from the single-process one"
            parse_rates[c] = n / secs
            del out
        ceiling = reader_ceiling(dump, n)
        index_rates = {c: index_rate(reference, c, tmp) for c in counts}
        script = tmp / "child.py"
        script.write_text(CHILD)
        bigger = tmp / "x4.json.gz"
        scaled_dump(dump, bigger, 4)
        rss1 = peak_rss_mib(dump, counts[-1], script)  # a running maximum over children: smaller dump first
        rss4 = peak_rss_mib(bigger, counts[-1], script)

    top = counts[-1]
    per_core, efficiency = parse_rates[1], parse_rates[top] / (parse_rates[1] * top)
    idx1, index_eff = index_rates[1], index_rates[top] / (index_rates[1] * top)

    def extrapolate(parse_per_core: float) -> dict:
        parse_rate = min(parse_per_core * TARGET_CORES * efficiency, ceiling)
        index_rate_16 = idx1 * TARGET_CORES * index_eff
        parse_h, index_h = FULL_CORPUS / parse_rate / 3600, FULL_CORPUS / index_rate_16 / 3600
        return {"parse_paragraphs_per_s": round(parse_rate), "parse_hours": round(parse_h, 2),
                "index_docs_per_s": round(index_rate_16), "index_hours": round(index_h, 2),
                "dump_to_index_hours": round(parse_h + index_h, 2),
                "limited_by_reader": parse_rate == ceiling, "under_one_hour": parse_h + index_h < 1.0}

    write_result(args.name, {
        "input": f"CirrusSearch dump x{args.scale} ({n} paragraphs); x4 of it for memory",
        "cores_here": cores_here,
        "parse": {"paragraphs_per_s_by_workers": {str(c): round(r, 1) for c, r in parse_rates.items()},
                  "speedup_by_workers": {str(c): round(r / per_core, 3) for c, r in parse_rates.items()},
                  "reference": "1 worker (the single-process parse)",
                  "parallel_efficiency_at_max": round(efficiency, 3), "same_output": True,
                  "serial_reader_ceiling_paragraphs_per_s": round(ceiling, 1)},
        "index_tantivy": {"docs_per_s_by_threads": {str(c): round(r, 1) for c, r in index_rates.items()},
                          "parallel_efficiency_at_max": round(index_eff, 3)},
        "memory": {f"peak_rss_mib_1x_{top}_workers": round(rss1, 1), f"peak_rss_mib_4x_{top}_workers": round(rss4, 1),
                   "ratio_4x_over_1x": round(rss4 / rss1, 3)},
        "extrapolated_16_cores_full_corpus": {
            "assumptions": f"{FULL_CORPUS:,} paragraphs; per-core rates from here x {TARGET_CORES} x the "
                           f"parallel efficiency measured here at {top} cores; parse capped by the serial reader; "
                           "parse and index run one after the other (two DVC stages)",
            "at_measured_wikitext_rate": extrapolate(per_core),
            "at_real_wikitext_rate_1300_per_core": extrapolate(REAL_WIKITEXT_PER_CORE),
        },
    }, args.out_dir)


if __name__ == "__main__":
    main()
