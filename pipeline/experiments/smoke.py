"""``make smoke``: every stage of every track, crawl to compare, on a tiny profile, in a scratch copy of the checkout.

What it checks is the install and the path: pywb serves the sample, Scrapy crawls it, the extractor and NLQuAD
build run, Wikipedia is indexed and searched, every model trains (two steps, one seed: ``infra/smoke/profile.yaml``),
predicts and is scored, and ``compare`` pairs every system with its baselines, all under ``dvc repro`` and Prefect as
a real run is. Its figures say that the path runs, not how well anything reads.

The copy holds the checkout's files as they are (committed or not, git-ignored ones left out) with the profile
applied to its params.yaml; it has its own DVC cache and Prefect server, so nothing the checkout holds changes. It
is removed when the run passes (``--keep`` keeps it) and kept, with its log, when it fails.

    python -m pipeline.experiments.smoke [--keep] [--profile infra/smoke/profile.yaml] [--cpu-threads N]

``--cpu-threads 1`` where another job shares the cores (the test suite runs it beside another worker): two
processes of two torch threads each on two cores wait on each other, and a step then takes about twice what
one thread each takes. Alone, the committed two threads are faster.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PROFILE = ROOT / "infra" / "smoke" / "profile.yaml"
LINKED = (".venv", ".venv-pywb")  # the checkout's environments, used as they are
LOCK = "dvc.lock"


class SmokeError(RuntimeError):
    """The smoke run could not start or did not pass; the message says where to look."""


def working_files(root: Path) -> list[str]:
    """The checkout's files as they are now: tracked and untracked, less what git ignores (outputs, caches,
    environments) and less tracked files deleted from the working tree."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                         capture_output=True, check=True).stdout.decode("utf-8", "surrogateescape")
    return sorted({name for name in out.split("\0") if name and os.path.lexists(root / name)})


def scratch_copy(root: Path, dest: Path) -> None:
    """``root``'s working files into ``dest`` as a git repository of one commit (DVC and the stages read git),
    with ``../shared`` beside it as params.yaml expects and the checkout's environments linked. The checkout's
    dvc.lock stays behind: it records the default profile's outputs, none of which the copy has or builds, and
    DVC reads and rewrites the whole lock after every stage (about 1.6 s a stage at its full size)."""
    for name in working_files(root):
        if name == LOCK:
            continue
        target = dest / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / name, target, follow_symlinks=False)
    shared = (root.parent / "shared").resolve()
    if shared.is_dir():
        (dest.parent / "shared").symlink_to(shared)
    for name in LINKED:
        if (root / name).exists():
            (dest / name).symlink_to((root / name).resolve())
    env = dict(os.environ, GIT_AUTHOR_NAME="smoke", GIT_AUTHOR_EMAIL="smoke@localhost",
               GIT_COMMITTER_NAME="smoke", GIT_COMMITTER_EMAIL="smoke@localhost")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "smoke: the checkout's files"]):
        subprocess.run(cmd, cwd=dest, env=env, check=True, capture_output=True)


def apply_profile(dest: Path, profile: Path) -> dict[str, Any]:
    """The profile's values into the copy's params.yaml, checked against the schema first (as a sweep is)."""
    from dvc.utils.hydra import apply_overrides

    from pipeline.experiments.overrides import override
    from pipeline.experiments.profile import load_profile

    values = load_profile(profile, dest / "params.yaml")
    apply_overrides(str(dest / "params.yaml"), [override(k, v) for k, v in values.items()])
    return values


def set_cpu_threads(dest: Path, threads: int) -> list[str]:
    """Every trained section's ``cpu_threads`` in the copy's params.yaml: an Infrastructure key, so no profile or
    run may set it; the person who starts the smoke run chooses it for their machine. Returns the keys set."""
    import yaml
    from dvc.utils.hydra import apply_overrides

    from pipeline.params import load_params

    raw = yaml.safe_load((dest / "params.yaml").read_text(encoding="utf-8"))
    keys = sorted(f"{name}.cpu_threads" for name, section in raw.items()
                  if isinstance(section, dict) and "cpu_threads" in section)
    apply_overrides(str(dest / "params.yaml"), [f"{key}={int(threads)}" for key in keys])
    load_params(dest / "params.yaml")  # the schema's bounds (1 to 1024) hold, or the run does not start
    return keys


def run_env(dest: Path) -> dict[str, str]:
    """The copy's own Prefect home and server (stopped soon after the last stage); never a team server."""
    env = {k: v for k, v in os.environ.items() if k not in ("PREFECT_API_URL", "PREFECT_API_KEY", "PREFECT_HOME")}
    venv_bin = str((dest / ".venv" / "bin").resolve()) if (dest / ".venv").exists() else str(Path(sys.executable).parent)
    env.update(PATH=venv_bin + os.pathsep + env.get("PATH", ""), PREFECT_HOME=str(dest / ".prefect"),
               QA_PIPELINE_PREFECT_IDLE_S="30", QA_PIPELINE_NO_PROGRESS="1", PREFECT_SERVER_ANALYTICS_ENABLED="false",
               DO_NOT_TRACK="1", DVC_NO_ANALYTICS="1",
               # importing torch._dynamo (transformers does) makes torch's compile cache under $TMPDIR: keep it
               # in the scratch folder, which goes at the end, so the run leaves nothing behind
               TORCHINDUCTOR_CACHE_DIR=str(dest.parent / "torchinductor"))
    return env


def track_lines(compare: dict[str, Any]) -> list[str]:
    """One line per track from ``reports/compare.json``: how many pairs were scored and on how many questions,
    and the first pair's figures, so a reader sees every track came out."""
    tracks: dict[str, list[dict]] = {}
    for pair in compare.get("pairs", []):
        tracks.setdefault(pair["track"], []).append(pair)
    lines = []
    for track, pairs in sorted(tracks.items()):
        first = pairs[0]
        evals = sorted({p["eval"] for p in pairs})
        systems = sorted({p["system"] for p in pairs})
        lines.append(f"{track}: {len(pairs)} pairs scored, {len(systems)} system(s) on {', '.join(evals)} "
                     f"({first['questions']} questions); e.g. {first['system']} {first['figure']} "
                     f"{first['system_mean']:.1f} against {first['baseline']} {first['baseline_mean']:.1f}")
    return lines


def stop_server(dest: Path, env: dict[str, str]) -> None:
    subprocess.run([sys.executable, "-c", "from flows._server import stop_shared_server; stop_shared_server()"],
                   cwd=dest, env=env, capture_output=True, timeout=120)


def smoke(root: Path = ROOT, profile: Path = PROFILE, keep: bool = False, parent: Path | None = None,
          echo=print, log_sink: list[str] | None = None, cpu_threads: int | None = None) -> list[str]:
    """Run it; returns the per-track lines (``log_sink`` receives the run's whole console). Raises
    ``SmokeError`` (the copy kept) when a stage fails."""
    started = time.monotonic()
    base = Path(tempfile.mkdtemp(prefix="qa-pipeline-smoke-", dir=parent))
    dest = base / "checkout"
    dest.mkdir()
    scratch_copy(root, dest)
    apply_profile(dest, profile)
    if cpu_threads is not None:
        try:
            set_cpu_threads(dest, cpu_threads)
        except Exception:
            shutil.rmtree(base, ignore_errors=True)  # refused before any stage ran: nothing to keep
            raise
    env = run_env(dest)
    log_path = base / "smoke.log"
    echo(f"smoke: a scratch copy in {dest}, profile {profile.relative_to(root) if profile.is_relative_to(root) else profile}")
    try:
        with log_path.open("w", encoding="utf-8") as log:
            proc = subprocess.Popen([sys.executable, "-m", "pipeline.experiments.repro"], cwd=dest, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            assert proc.stdout is not None
            for line in proc.stdout:
                log.write(line)
                if log_sink is not None:
                    log_sink.append(line)
                if line.startswith("[repro] stage "):
                    echo("smoke: " + line.removeprefix("[repro] ").split(",")[0].rstrip())
            code = proc.wait()
    finally:
        stop_server(dest, env)
    if code != 0:
        tail = log_path.read_text(encoding="utf-8").splitlines()[-30:]
        raise SmokeError(f"dvc repro failed (exit {code}) after {time.monotonic() - started:.0f} s; the copy and "
                         f"its log are kept: {log_path}\n" + "\n".join(tail))
    compare = json.loads((dest / "reports" / "compare.json").read_text(encoding="utf-8"))
    lines = track_lines(compare)
    for line in lines:
        echo(line)
    elapsed = time.monotonic() - started
    if keep:
        echo(f"smoke: passed in {elapsed / 60:.1f} min; the copy is kept: {dest}")
    else:
        shutil.rmtree(base, ignore_errors=True)
        echo(f"smoke: passed in {elapsed / 60:.1f} min (every track, crawl to compare); the scratch copy is removed")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--profile", type=Path, default=PROFILE)
    ap.add_argument("--keep", action="store_true", help="keep the scratch copy when the run passes")
    ap.add_argument("--cpu-threads", type=int, default=None,
                    help="torch's threads per run in the copy (default: params.yaml's); 1 beside another job")
    args = ap.parse_args(argv)
    from pipeline.experiments.sweep import SweepError
    from pipeline.params import ParamsError

    try:
        smoke(profile=args.profile.resolve(), keep=args.keep, cpu_threads=args.cpu_threads)
    except (SmokeError, SweepError, ParamsError) as exc:
        print(f"smoke: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
