"""``make publish DIR=...``: the outputs dvc.lock records, as a folder any static web server can serve read-only.

A DVC remote over HTTP is a plain folder (``files/md5/<2 hex>/<rest>``) served by anything that serves files:
GitHub Pages, an S3 bucket's website endpoint, nginx. A stranger then needs no credentials and no write access:

    dvc remote add --local public https://example.org/qa-pipeline/dvc   # where DIR is served
    dvc remote modify --local public verify true   # every file checked against its hash as it arrives
    dvc pull -r public          # every output of this commit; `dvc status` is clean, `dvc metrics show` works
    dvc pull -r public --with-deps retrieve   # what `make publish DIR=... STAGES=retrieve` published

DVC's ``verify`` is off by default: without it a forged file on the server (or on the way) is checked out as
it came, and a forged ``.dir`` listing can name paths outside the checkout.

Only a checkout whose dvc.lock, dvc.yaml and params.yaml are the commit's and whose workspace matches dvc.lock
(``dvc status`` clean, the named stages with their upstream ones) is published, so the folder holds exactly what
that commit says. DIR is written by ``dvc push`` to a local remote configured in
``.dvc/config.local`` for the push only; files already there are not written again.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REMOTE = "publish-dir"


def _dvc(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    dvc = Path(sys.executable).with_name("dvc")
    return subprocess.run([str(dvc) if dvc.exists() else "dvc", *args], cwd=cwd, capture_output=True, text=True)


def publish(out: Path, repo: Path, targets: list[str] | None = None) -> str:
    """Push the workspace's outputs (all, or ``targets``' and their deps') into ``out``; returns DVC's summary."""
    changed = subprocess.run(["git", "status", "--porcelain", "--", "dvc.lock", "dvc.yaml", "params.yaml"], cwd=repo,
                             capture_output=True, text=True)
    if changed.returncode != 0 or changed.stdout.strip():
        files = ", ".join(line[3:] for line in changed.stdout.splitlines()) or changed.stderr.strip()[-300:]
        raise SystemExit(f"{files} differ from the commit: a reader's clone has the commit's, so the folder must "
                         "hold what the commit records; commit them (or `git checkout` them) first")
    status = _dvc(["status", "--json", *(["--with-deps", *targets] if targets else [])], repo)
    if status.returncode != 0:
        raise SystemExit(f"dvc status failed: {status.stderr.strip()[-500:]}")
    if status.stdout.strip() not in ("{}", ""):
        raise SystemExit("the workspace differs from dvc.lock (dvc status is not clean): run `dvc repro` (or check "
                         "out the commit to publish) first, so the folder holds what a commit records")
    out = out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    added = _dvc(["remote", "add", "--local", "--force", REMOTE, str(out)], repo)
    if added.returncode != 0:
        raise SystemExit(f"dvc remote add failed: {added.stderr.strip()[-500:]}")
    try:
        pushed = _dvc(["push", "-r", REMOTE, *(["--with-deps", *targets] if targets else [])], repo)
    finally:
        _dvc(["remote", "remove", "--local", REMOTE], repo)
    if pushed.returncode != 0:
        raise SystemExit(f"dvc push failed: {(pushed.stdout + pushed.stderr).strip()[-1000:]}")
    return (pushed.stdout.strip().splitlines() or ["done"])[-1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.publish", description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path, help="the folder to write (serve it read-only over HTTP)")
    ap.add_argument("targets", nargs="*", help="stages to publish with their deps (default: every output)")
    args = ap.parse_args(argv)
    summary = publish(args.out, Path.cwd(), args.targets)
    # a part published is pulled by the same stage names with their upstream stages' outputs (what was pushed):
    # without --with-deps a reader gets the named stages' outputs only, and DVC would rerun the stages before them
    pull = " ".join(["dvc pull -r public", *(["--with-deps", *args.targets] if args.targets else [])])
    print(f"{args.out}: {summary}. Serve it read-only over HTTP, then on any clone of this commit:\n"
          f"  dvc remote add --local public https://<where it is served>\n"
          f"  dvc remote modify --local public verify true\n  {pull}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
