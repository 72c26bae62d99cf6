"""``make reset``'s last line: what the checkout holds now, in one sentence.

After a reset, ``dvc status`` lists every stage whose outputs this machine never built (a fresh clone: all of
them) as changed, hundreds of lines that read as a failure. What a user needs is three counts: the stages
whose outputs are here as dvc.lock records them, the ones never built on this machine (their outputs are not in
the local cache: ``dvc pull`` or ``dvc repro`` makes them), and the ones that really differ from what dvc.lock
records (an edited file, a changed param), named.
"""

from __future__ import annotations

import sys
from pathlib import Path


def classify(status: dict[str, list], stages: list[str]) -> tuple[list[str], list[str], list[str]]:
    """(up to date, not built here, changed) from ``dvc status``'s reading. A stage is not built here when what
    differs is only missing files: its outputs 'not in cache' or its inputs 'deleted' (a stage whose outputs
    git keeps waits on the stages that make its inputs). Anything else (a modified file, a changed param or
    command) is a change, named."""
    missing, changed = [], []
    for stage, entries in status.items():
        absent_only = True
        for entry in entries:
            if not isinstance(entry, dict) or set(entry) - {"changed outs", "changed deps"}:
                absent_only = False
                continue
            for files in entry.values():
                absent_only &= all(v in ("not in cache", "deleted") for v in (files or {}).values())
        (missing if absent_only else changed).append(stage)
    return [s for s in stages if s not in status], missing, changed


def summary(up_to_date: list[str], missing: list[str], changed: list[str]) -> str:
    total = len(up_to_date) + len(missing) + len(changed)
    line = (f"reset: params.yaml, dvc.lock and the outputs git keeps are as committed; {len(up_to_date)} of {total} "
            f"stages up to date here")
    if missing:
        line += (f", {len(missing)} never built on this machine (`dvc pull` fetches them, `dvc repro` builds "
                 f"them)")
    if changed:
        shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
        line += (f", {len(changed)} out of date (a file, param or command differs from what dvc.lock records): "
                 f"{shown} (`dvc status` says how, `dvc repro` rebuilds them)")
    return line


def main(argv: list[str] | None = None) -> int:
    from dvc.repo import Repo

    with Repo(str(Path.cwd())) as repo:
        stages = [s.name for s in repo.index.stages]
        status = repo.status()
    print(summary(*classify(status, stages)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
