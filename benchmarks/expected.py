"""Are the expected figures reproduced? ``benchmarks/expected.yaml`` holds the papers' figures this pipeline
sets its own beside and this pipeline's pinned figures, each with a tolerance and the command that makes it
(Pyserini's reproduction pages are the model). This reads the checkout's outputs and prints one row per figure:
the value here, the paper's and the pinned one, and OK / FAIL / differs. It says which workspace it read, and
marks a figure whose stage is not up to date there: git keeps the figures files, so a clone that built nothing
holds the committed figures, which reproduce nothing. A pinned figure outside its tolerance
is a regression (exit 1); a paper figure outside its tolerance is reported with the reason the docs give (the
offline stand-ins differ from the papers' data by design) and does not fail the check.

    .venv/bin/python -m benchmarks.expected [--file benchmarks/expected.yaml] [--root .]
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
EXPECTED = REPO / "benchmarks" / "expected.yaml"
_PICK = re.compile(r"^\[(\w+)=(.+)\]$")


class ExpectedError(ValueError):
    """A row of expected.yaml that cannot be checked as written."""


def lookup(data: Any, key: str) -> Any:
    """``a.b.[check=x].value``: dict keys by name, a list item by one of its fields (keys may hold '@')."""
    for part in _split(key):
        pick = _PICK.match(part)
        if pick:
            field, wanted = pick.groups()
            matches = [item for item in data if isinstance(item, dict) and str(item.get(field)) == wanted]
            if len(matches) != 1:
                raise ExpectedError(f"{key}: {len(matches)} items with {field}={wanted}")
            data = matches[0]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            raise ExpectedError(f"{key}: no {part!r} here")
    return data


def _split(key: str) -> list[str]:
    # dots separate parts, except inside [...] and in names such as "ndcg@10" (no dot there anyway)
    parts, depth, current = [], 0, ""
    for ch in key:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "." and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    return [*parts, current]


SEED_TOLERANCE_Z = 3.0  # a rebuild's mean over n seeds against the pinned mean over n: z x SD x sqrt(2 / n)


def pinned_tolerance(pin: dict) -> float | str:
    """A pinned figure's tolerance: as written, or, for the mean over training seeds (``sd`` and ``seeds``
    given, from the run that pinned it), what that spread implies for a rebuild's mean over as many seeds: the
    difference of two such means has a standard error of ``sd * sqrt(2 / seeds)``, and 3 of them cover it on
    any processor whose kernels move a run about as much as another seed does (bf16 rounding is such a draw)."""
    if "tolerance" in pin:
        return pin["tolerance"]
    if "sd" in pin and "seeds" in pin:
        sd, n = float(pin["sd"]), int(pin["seeds"])
        if n < 2 or sd < 0:
            raise ExpectedError(f"a tolerance from seeds needs at least 2 seeds and an SD >= 0, got {pin}")
        return round(SEED_TOLERANCE_Z * sd * math.sqrt(2 / n), 2)
    raise ExpectedError(f"pinned {pin} has neither a tolerance nor an sd over seeds")


def within(value: float, expected: float, tolerance: float | str) -> bool:
    if isinstance(tolerance, str) and tolerance.endswith("%"):
        return abs(value - expected) <= abs(expected) * float(tolerance[:-1]) / 100
    return abs(value - expected) <= float(tolerance) + 1e-9


@dataclass
class Checked:
    id: str
    value: float | None
    paper: str
    pinned: str
    failed: bool


def check_row(row: dict, root: Path) -> Checked:
    path = root / row["file"]
    try:
        value = float(lookup(json.loads(path.read_text(encoding="utf-8")), row["key"]))
    except FileNotFoundError:
        return Checked(row["id"], None, "-", f"FAIL: {row['file']} missing (run: {row['command']})", True)
    paper = pinned = "-"
    if "paper" in row:
        ref = row["paper"]
        ok = within(value, ref["value"], ref["tolerance"])
        if ref.get("not_comparable"):  # equal in value, not in kind: no reproduction is claimed either way
            paper = (f"{ref['value']:g} +-{ref['tolerance']}: " + ("within" if ok else "outside")
                     + f", not a reproduction ({ref['not_comparable']})")
        else:
            paper = f"{ref['value']:g} +-{ref['tolerance']}: " + ("reproduced" if ok else "differs" + (
                f" ({ref['why']})" if ref.get("why") else ""))
    failed = False
    if "pinned" in row:
        pin = row["pinned"]
        tolerance = pinned_tolerance(pin)
        failed = not within(value, pin["value"], tolerance)
        source = f" (3 x SD {pin['sd']:g} x sqrt(2/{pin['seeds']}))" if "tolerance" not in pin else ""
        pinned = f"{pin['value']:g} +-{tolerance}{source}: " + ("FAIL" if failed else "OK")
    return Checked(row["id"], value, paper, pinned, failed)


def stages_built_here(root: Path, files: list[str]) -> dict[str, bool]:
    """For each file, whether the stage that writes it is up to date in this workspace (``dvc status``): the
    figures files are kept by git, so a clone that built nothing still holds the committed ones, and reading
    them would 'reproduce' every pinned figure. A file no stage writes counts as built, and so does every file
    of a folder that is no DVC workspace (outputs unpacked from elsewhere, read as given)."""
    if not (root / "dvc.yaml").is_file():
        return dict.fromkeys(files, True)
    import contextlib

    from dvc.repo import Repo

    with contextlib.chdir(root), Repo(".") as repo:  # DVC resolves an output's path against the cwd
        writer = {o.def_path: s for s in repo.index.stages for o in s.outs}
        stages = {f: writer.get(f) for f in files}
        wanted = sorted({s.name for s in stages.values() if s is not None})
        stale = set(repo.status(targets=wanted)) if wanted else set()
    return {f: stage is None or stage.name not in stale for f, stage in stages.items()}


def load_rows(path: Path) -> list[dict]:
    rows = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("rows") or []
    ids = [r.get("id") for r in rows]
    if len(set(ids)) != len(ids):
        raise ExpectedError(f"{path}: repeated ids")
    for row in rows:
        missing = {"id", "what", "file", "key", "command"} - set(row)
        if missing or not ({"paper", "pinned"} & set(row)):
            raise ExpectedError(f"{path}: row {row.get('id')!r} lacks {sorted(missing) or 'paper or pinned'}")
        if "pinned" in row:
            pinned_tolerance(row["pinned"])  # written or from seeds, checked before any output is read
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.expected", description=__doc__.split("\n")[0])
    ap.add_argument("--file", type=Path, default=EXPECTED)
    ap.add_argument("--root", type=Path, default=REPO, help="the checkout whose outputs are read")
    args = ap.parse_args(argv)
    try:
        rows = load_rows(args.file)
        checked = [check_row(row, args.root) for row in rows]
    except ExpectedError as exc:
        print(exc, file=sys.stderr)
        return 2
    built = stages_built_here(args.root, sorted({r["file"] for r in rows}))
    committed = {r["id"] for r in rows if not built[r["file"]]}
    print(f"read the outputs in {args.root.resolve()}" + (
        f"; {len(committed)} of {len(rows)} figures come from files this workspace did not build (its stage is "
        "out of date or never ran here): the committed figures, marked 'not built here'" if committed else
        ", every figure from a stage up to date here"))
    print("| figure | here | paper | pinned |\n|---|---|---|---|")
    for c in checked:
        here = "-" if c.value is None else f"{c.value:g}" + (" (not built here)" if c.id in committed else "")
        print(f"| {c.id} | {here} | {c.paper} | {c.pinned} |")
    failed = [c.id for c in checked if c.failed and c.id not in committed]
    unchecked = [c.id for c in checked if c.id in committed and c.pinned != "-"]
    print(f"\n{len(checked)} figures; {len(failed)} pinned figure(s) not reproduced" + (
        f": {', '.join(failed)}" if failed else "") + (
        f"; {len(unchecked)} pinned figure(s) not checked, their stages not built here (`dvc repro` them, then "
        "run this again)" if unchecked else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
