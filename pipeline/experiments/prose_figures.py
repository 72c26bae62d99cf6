"""Figures in the README's and the docs' prose, each found in a committed file it comes from, so none goes stale.

A results table or reading that is generated (between ``<!-- name:start -->`` and ``<!-- name:end -->``) is
checked by the writer that made it (``results_table --check``). Everything else is prose a person wrote, and its
figures (every number with a decimal point) are checked here: a figure must equal, within its own rounding, a
number in one of the files the text cites. A file is cited by its path in the text (``reports/x.json``,
``benchmarks/results/x.json``, ``metrics/...``, ``dvclive/...``): the paragraph's own citations and those of
its section (the text under one heading) are its sources. A share in a file (0.286) may be written as a percent
(28.6) and a percent as a share. The papers' figures are sources everywhere: the expected-figures file
(``benchmarks/expected.yaml``) and the paper rows (``metrics/*/paper_*.json``). Seconds may be written as minutes.
A number after a tool's or data set's name is its version ("DVC 3.67", "QuAIL 1.3"), not a figure.

A figure that no cited file holds is either stale, or computed in the prose (a ratio of two counts), or read
from somewhere that is not committed (a log): cite the file that holds it, write the figure into the report it
belongs in, or leave it out. Code (fenced or inline) is not prose: a command's arguments are not results.

    python -m pipeline.experiments.prose_figures [--revision HEAD]   # every unsupported figure, with its line

The test reads the committed documents and files (``--revision HEAD``): a rebuild that moved a trained figure
in the workspace leaves the manual describing the committed run, which is what it is checked against.
"""

from __future__ import annotations

import bisect
import json
import math
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCS = ("README.md", "docs")
CITATION = re.compile(r"(?<![\w/.-])((?:reports|metrics|benchmarks/results|dvclive)/[\w./@-]+\.json)")
FIGURE = re.compile(r"(?<![\w.\-/])[-+−]?\d+\.\d+(?![\w.]*[\w/])")
GENERATED = re.compile(r"<!-- ([\w-]+):start.*?<!-- \1:end -->", re.S)
FENCED = re.compile(r"```.*?```", re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
SCALES = (1.0, 100.0, 0.01, 1 / 60)  # as written, a share as a percent, a percent as a share, seconds as minutes
# a version, not a figure: "DVC 3.67", "QuAIL 1.3", "Python 3.12", "torch 2.11 (CUDA 13)"
VERSION_BEFORE = re.compile(r"(?:\b(?:DVC|QuAIL|Python|torch|transformers|accelerate|CUDA|Prefect|version)|\bv)\s*$")


@dataclass(frozen=True)
class Unsupported:
    doc: str
    line: int
    figure: str
    sources: tuple[str, ...]
    text: str

    def __str__(self) -> str:
        where = ", ".join(self.sources) if self.sources else "no file cited"
        return f"{self.doc}:{self.line}: {self.figure} is in none of: {where}  | {self.text}"


def _numbers(value: object) -> Iterator[float]:
    if isinstance(value, bool):
        return
    if isinstance(value, (int, float)):
        if math.isfinite(value):
            yield float(value)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _numbers(v)
    elif isinstance(value, list):
        for v in value:
            yield from _numbers(v)


def read(path: str, root: Path = ROOT, revision: str | None = None) -> str | None:
    """A file's text in the checkout, or as committed at ``revision`` (what the docs describe: a rebuild on
    another processor moves the workspace's trained figures, not the committed ones); None when absent."""
    if revision is None:
        full = root / path
        return full.read_text(encoding="utf-8") if full.is_file() else None
    shown = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=root, capture_output=True, text=True)
    return shown.stdout if shown.returncode == 0 else None


@lru_cache(maxsize=None)
def file_numbers(path: str, root: Path = ROOT, revision: str | None = None) -> tuple[float, ...]:
    """Every number a JSON or YAML file holds (sorted, in each of its ``SCALES``); an absent file holds none
    (the citation then supports nothing)."""
    text = read(path, root, revision)
    if text is None:
        return ()
    raw = list(_numbers(json.loads(text) if path.endswith(".json") else yaml.safe_load(text)))
    return tuple(sorted({abs(v) * k for v in raw for k in SCALES}))


def paper_sources(root: Path = ROOT) -> tuple[str, ...]:
    """The papers' figures: sources of every paragraph."""
    rows = sorted(str(p.relative_to(root)) for p in (root / "metrics").glob("*/paper_*.json"))
    return ("benchmarks/expected.yaml", *rows)


def supported_in(figure: str, sources: tuple[str, ...], root: Path = ROOT, revision: str | None = None) -> bool:
    """Whether a number in ``sources`` rounds to ``figure`` at the figure's own decimals."""
    digits = len(figure.split(".")[1])
    x = abs(float(figure.replace("−", "-")))
    half = 0.5 * 10 ** -digits + 1e-9
    for source in sources:
        values = file_numbers(source, root, revision)
        i = bisect.bisect_left(values, x - half)
        if i < len(values) and values[i] <= x + half:
            return True
    return False


def _paragraphs(section: str) -> Iterator[tuple[int, str]]:
    """(offset of its first line in the section, text): blank-line separated blocks, a list item or a table row
    each a block of its own."""
    block: list[str] = []
    start = 0
    for i, line in enumerate(section.split("\n")):
        new_item = re.match(r"\s*(?:[*-]|\d+\.) ", line) or line.startswith("|")
        if not line.strip() or new_item:
            if block:
                yield start, "\n".join(block)
            block, start = ([line], i) if line.strip() else ([], i + 1)
        else:
            if not block:
                start = i
            block.append(line)
    if block:
        yield start, "\n".join(block)


def _blank(match: re.Match[str]) -> str:
    """Text removed from the check keeps its line breaks, so line numbers stay the file's."""
    return "\n" * match.group(0).count("\n")


def check_text(doc: str, text: str, root: Path = ROOT, revision: str | None = None) -> list[Unsupported]:
    """Every figure of ``text`` (the file ``doc``) that no source of its paragraph holds (the sources as in the
    checkout, or as committed at ``revision``)."""
    text = FENCED.sub(_blank, GENERATED.sub(_blank, text))
    papers = paper_sources(root)
    out: list[Unsupported] = []
    offset = 0
    for section in re.split(r"(?m)^(?=#{1,6} )", text):
        section_cites = set(CITATION.findall(section))
        for first, para in _paragraphs(section):
            sources = tuple(sorted(set(CITATION.findall(para)) or section_cites))
            prose = INLINE_CODE.sub("", para)
            for m in FIGURE.finditer(prose):
                if VERSION_BEFORE.search(prose[max(0, m.start() - 20):m.start()]):
                    continue
                number, line = m.group(0), prose[:m.start()].count("\n")
                figure = number.lstrip("+-−")
                if not supported_in(figure, sources + papers, root, revision):
                    text_line = prose.split("\n")[line].strip()
                    out.append(Unsupported(doc, offset + first + line + 1, number, sources, text_line[:120]))
        offset += section.count("\n")
    return out


def documents(root: Path = ROOT) -> list[str]:
    """The README and the docs as committed (a file git does not track is nobody's manual)."""
    listed = subprocess.run(["git", "ls-files", *DOCS], cwd=root, capture_output=True, text=True, check=True)
    return [p for p in listed.stdout.split() if p.endswith(".md")]


def check(root: Path = ROOT, revision: str | None = None) -> list[Unsupported]:
    """Every unsupported figure of the README and the docs: the checkout's (``revision`` None), or both the
    documents and their sources as committed at ``revision``."""
    return [u for doc in documents(root) for u in check_text(doc, read(doc, root, revision) or "", root, revision)]


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.prose_figures", description=__doc__.split("\n")[0])
    ap.add_argument("--revision", help="check the documents and their sources as committed there (e.g. HEAD)")
    found = check(revision=ap.parse_args(argv).revision)
    for u in found:
        print(u)
    print(f"{len(found)} figure(s) in prose without a cited source", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
