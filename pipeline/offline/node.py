"""The one command on an offline node: train, select on dev, predict and score every trained system.

Run inside a bundle (``make gpu-bundle``) with the node's own ``python3`` and nothing installed:

    python3 -m pipeline.offline.node --out OUT

It puts the bundle's ``site/`` (the packages the node lacks) and NLTK data on the path, validates the bundle's
params.yaml (every section but the Prefect schedule, which was checked when the bundle was built: Prefect is not
on a compute node), and runs the training stages' own functions in ``bundle.json``'s order: the same code as
``dvc repro``, so a figure means the same thing on both sides. A killed run started again resumes: finished
stages are skipped (``.node-done.json``) and a training stage resumes from its last checkpoint. A node whose job
limit is shorter than the run (``timeout`` sends SIGTERM) writes what the finished stages made and stops; the next
allocation, even on a fresh machine, carries on with ``--resume-from`` the folder that came back. OUT receives
``results.tar.gz`` (every report, headline figure, DVCLive curve, plot and prediction the stages wrote, and the
params they ran with) and ``gpu_profile.json`` (device, time per stage, training tokens/s and model FLOPs
utilisation per model, and each system beside its baselines with paired intervals): two files, under the
device tool's limits on what comes back.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import platform
import signal
import sys
import tarfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from pipeline.common.bounded_tar import ArchiveLimitError, open_bounded, quoted

BUNDLE = Path(__file__).resolve().parents[2]
STATE_FILE = "node_state.json"
MAX_RESULTS_BYTES = 512 * 2**20  # an earlier allocation's results: reports, curves, predictions (a few MiB)
MAX_PAYLOAD_BYTES = 4 * 2**30  # the bundle's payload decompressed: packages and start weights (under 64 MiB packed)


def _chains() -> tuple[tuple[str, ...], ...]:
    from pipeline.stage_table import model_chains

    return model_chains()


# stages that hand a model to the next one: models do not come back in results.tar.gz, so a resumed run redoes
# a chain it finds half done
MODEL_CHAINS = _chains()


def trained_section(stage: str) -> str | None:
    """The params section of the model a stage trains (``train_quail_mc@full``: ``quail_mc``), else None."""
    if not stage.startswith("train_"):
        return None
    name = stage.removeprefix("train_").split("@")[0]
    return {"span": "span_window"}.get(name, name)


class Stopped(BaseException):
    """SIGTERM (a job limit, ``timeout``) arrived: stop after writing what the finished stages made. A
    BaseException, so no ``except Exception`` inside a stage swallows it."""


def _stop_on_sigterm() -> None:
    def handler(signum, frame):
        raise Stopped(f"signal {signum}")

    signal.signal(signal.SIGTERM, handler)


def resume_from(folder: Path, bundle: Path, outputs: list[str]) -> dict[str, dict]:
    """An earlier allocation's results (``results.tar.gz``, ``node_state.json``) back into the bundle, so the
    stages it finished are skipped and the later ones read their outputs. Only declared outputs are taken, with
    tarfile's ``data`` filter (no links, absolute paths or ``..``)."""
    state = json.loads((folder / STATE_FILE).read_text(encoding="utf-8"))
    done = state.get("done")
    if not isinstance(done, dict) or not all(isinstance(v, dict) for v in done.values()):
        raise SystemExit(f"{folder / STATE_FILE}: no finished stages ('done') in it")
    try:
        tar = open_bounded(folder / "results.tar.gz", "gz", MAX_RESULTS_BYTES)
        members_read = tar.getmembers()
    except (ArchiveLimitError, tarfile.TarError, OSError, EOFError) as exc:
        raise SystemExit(f"{folder / 'results.tar.gz'}: {quoted(str(exc))}; nothing was taken from it") from None
    with tar:
        for m in members_read:  # "reports/../pipeline/x.py" names an output folder and lands in the code
            path = PurePosixPath(m.name)
            if path.is_absolute() or ".." in path.parts or m.name != path.as_posix() or not (m.isfile() or m.isdir()):
                raise SystemExit(f"{folder / 'results.tar.gz'}: entry {quoted(m.name)} is not a plain relative "
                                 "file; nothing was taken from it")
        members = [m for m in tar.getmembers()
                   if m.name != "params.yaml" and any(m.name == o or m.name.startswith(o.rstrip("/") + "/")
                                                      for o in outputs)]
        tar.extractall(bundle, members=members, filter="data")
    for chain in MODEL_CHAINS:
        if not all(stage in done for stage in chain):
            for stage in chain:
                done.pop(stage, None)
    return done


def unpack(bundle: Path) -> None:
    """The bundle's payload (inputs, weights, packages; ``pipeline.offline.bundle``) into the bundle folder, once:
    standard-library xz, members checked by tarfile's ``data`` filter (no links out, no absolute paths)."""
    from pipeline.offline.bundle import PAYLOAD, UNPACKED_MARK

    archive, mark = bundle / PAYLOAD, bundle / UNPACKED_MARK
    if not archive.exists() or mark.exists():
        return
    print(f"[node] unpacking {archive.name} ...", flush=True)
    with open_bounded(archive, "xz", MAX_PAYLOAD_BYTES) as tar:
        tar.extractall(bundle, filter="data")
    mark.write_text("done\n", encoding="utf-8")


def _prepare_environment(bundle: Path) -> None:
    """Before anything imports pydantic or nltk: the bundle's packages first, offline hub, NLTK's data."""
    site = str(bundle / "site")
    if site not in sys.path:
        sys.path.insert(0, site)
    os.environ.setdefault("NLTK_DATA", str(bundle / "nltk_data"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ["QA_PIPELINE_NO_PROGRESS"] = "1"


def load_node_params(path: Path):
    """``Params`` from the bundle's file: each section validated by its model; the schedule section (its cron
    check imports Prefect) taken as written, since nothing schedules on a compute node."""
    import yaml

    from pipeline.params import Params, ScheduleParams

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    sections = {}
    for name, field in Params.model_fields.items():
        if name not in data:
            raise ValueError(f"{path}: section {name!r} is missing")
        model = field.annotation
        sections[name] = (ScheduleParams.model_construct(**data[name]) if model is ScheduleParams
                          else model.model_validate(data[name]))
    return Params.model_construct(**sections)


def model_flops_per_token(model_dir: Path, seq_len: int) -> float:
    from transformers import AutoConfig

    from pipeline.training.flops import flops_per_token

    return flops_per_token(AutoConfig.from_pretrained(str(model_dir)), seq_len)


def device_name() -> str:
    import torch

    if torch.cuda.is_available():
        return torch.cuda.get_device_name(0)
    return f"cpu ({platform.machine()}, {os.cpu_count()} cores)"


def _stage_calls(params) -> list[tuple[str, Any]]:
    """Each node stage's work bound to ``params``, from the one stage table (``pipeline.stage_table``; Prefect's
    entry point reads the same table)."""
    from pipeline.offline.bundle import NODE_STAGES
    from pipeline.stage_table import call

    return [(stage, call(stage, params)) for stage in NODE_STAGES]


def _seq_len(params, stage: str) -> int:
    return getattr(params, trained_section(stage)).max_seq_len


class NodeRefusal(SystemExit):
    """The node cannot run as asked; the message says what to do instead. Raised before anything is unpacked."""

    def __init__(self, message: str) -> None:
        super().__init__(f"node: {message}")


def bundle_info(bundle: Path) -> dict:
    path = bundle / "bundle.json"
    if not path.is_file():
        raise NodeRefusal(f"{path} is missing: run this inside a folder `make gpu-bundle` made")
    return json.loads(path.read_text(encoding="utf-8"))


def check_python(info: dict, running: str | None = None) -> None:
    """The bundle's packages (pydantic's compiled core among them) are built for one Python: on another one the
    first import fails deep inside pydantic_core, so say which Python this is and how to rebuild for it."""
    running = running or ".".join(platform.python_version_tuple()[:2])
    wanted = str(info.get("python_version", ""))
    if wanted and running != wanted:
        raise NodeRefusal(f"this bundle's packages are for Python {wanted} and this is Python {running}: "
                          f"run it with python{wanted}, or rebuild the bundle for this node with "
                          f"`make gpu-bundle NODE_PYTHON={running}`")


def check_only(info: dict, only: list[str] | None) -> None:
    unknown = [s for s in only or [] if s not in info["stages"]]
    if unknown:
        raise NodeRefusal(f"--only names {', '.join(unknown)}, not a stage of this bundle; its stages: "
                          + ", ".join(info["stages"]))


def plan(info: dict, bundle: Path, only: list[str] | None) -> list[tuple[str, str]]:
    """(stage, what the run would do with it): what ``--dry-run`` prints, from ``bundle.json`` and the done-file."""
    done_file = bundle / ".node-done.json"
    done = json.loads(done_file.read_text(encoding="utf-8")) if done_file.exists() else {}
    return [(stage, "not asked (--only)" if only and stage not in only else
             "done in an earlier run, skipped" if stage in done else "runs") for stage in info["stages"]]


def run(out: Path, bundle: Path | None = None, only: list[str] | None = None, resume: Path | None = None) -> dict:
    bundle = bundle or BUNDLE
    info = bundle_info(bundle)
    check_python(info)
    check_only(info, only)
    unpack(bundle)
    _prepare_environment(bundle)
    os.chdir(bundle)
    params = load_node_params(bundle / "params.yaml")
    done_file = bundle / ".node-done.json"
    done: dict[str, dict] = json.loads(done_file.read_text(encoding="utf-8")) if done_file.exists() else {}
    if resume is not None:
        done.update(resume_from(resume, bundle, info["outputs"]))
        done_file.write_text(json.dumps(done, indent=2) + "\n", encoding="utf-8")
    current = [""]
    device = device_name()
    calls = dict(_stage_calls(params))
    if [s for s in info["stages"] if s not in calls]:
        raise SystemExit(f"bundle.json names stages this runner does not know: {info['stages']}")
    started = time.time()
    _stop_on_sigterm()
    try:
        _run_stages(info, params, calls, done, done_file, current, only, bundle, device)
    except Stopped as why:
        print(f"[node] stopped ({why}) during {current[0]}: writing the {len(done)} finished stages' outputs; "
              f"carry on with --resume-from this --out folder", flush=True)
    return _write_results(out, bundle, info, done, device, time.time() - started)


def _run_stages(info, params, calls, done, done_file, current, only, bundle, device) -> None:
    for stage in info["stages"]:
        if only and stage not in only:
            continue
        if stage in done:
            print(f"[node] {stage}: done in an earlier run, skipped", flush=True)
            continue
        current[0] = stage
        t0 = time.time()
        print(f"[node] {stage} ...", flush=True)
        result = calls[stage]()
        entry: dict[str, Any] = {"seconds": round(time.time() - t0, 1)}
        stats = result if trained_section(stage) else None  # a train stage returns its statistics
        if stats and stats.get("tokens_per_s_this_run"):
            from pipeline.training.flops import peak_flops

            per_token = model_flops_per_token(bundle / "start_model", _seq_len(params, stage))
            achieved = stats["tokens_per_s_this_run"] * per_token
            peak = peak_flops(device)
            entry.update({"tokens_per_s": stats["tokens_per_s_this_run"], "steps": stats.get("steps"),
                          "precision": stats.get("precision"), "model_tflops_per_s": round(achieved / 1e12, 3),
                          "mfu": round(achieved / peak, 4) if peak else None})
        done[stage] = entry
        done_file.write_text(json.dumps(done, indent=2) + "\n", encoding="utf-8")
        print(f"[node] {stage}: {entry}", flush=True)


def predictions_digests(bundle: Path, outputs: list[str]) -> dict[str, str]:
    """sha256 of every per-question prediction file the node wrote (they travel in results.tar.gz; the
    import commits them, and these digests tie what it commits to what the node wrote)."""
    from pipeline.common.layout import PATHS

    prefix = f"{PATHS.predictions.as_posix()}/"
    out = {}
    for rel in outputs:
        path = bundle / rel
        files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path] if path.exists() else []
        for f in files:
            name = f.relative_to(bundle).as_posix()
            if name.startswith(prefix):
                out[name] = hashlib.sha256(f.read_bytes()).hexdigest()
    return out


def _write_results(out: Path, bundle: Path, info: dict, done: dict, device: str, seconds: float) -> dict:
    import torch
    import transformers

    from pipeline.common.layout import PATHS

    complete = all(stage in done for stage in info["stages"])
    report = bundle / PATHS.compare.report
    compare = json.loads(report.read_text(encoding="utf-8")) if complete else {"pairs": []}
    params_text = (bundle / "params.yaml").read_text(encoding="utf-8")
    profile = {
        "device": device, "torch": torch.__version__, "transformers": transformers.__version__,
        "python": platform.python_version(), "profile": info.get("profile"),
        "complete": complete, "stages_left": [s for s in info["stages"] if s not in done],
        "seconds_this_run": round(seconds, 1), "seconds_all_stages": round(sum(e["seconds"] for e in done.values()), 1),
        "stages": done,
        "source": info.get("source"),  # the commit and params the bundle was built from (bundle.source_state)
        "predictions_sha256": predictions_digests(bundle, info["outputs"]),
        "systems_vs_baselines": [{k: p[k] for k in ("track", "eval", "system", "baseline", "figure", "system_mean",
                                                     "baseline_mean", "difference", "ci95", "above", "questions",
                                                     "unit", "units", "design_effect") if k in p}
                                 for p in compare["pairs"]],
    }
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / ".results.tar.gz.partial"
    with tarfile.open(tmp, "w:gz") as tar:
        for rel in info["outputs"]:
            if (bundle / rel).exists():
                tar.add(bundle / rel, arcname=rel)
        data = params_text.encode("utf-8")
        member = tarfile.TarInfo("params.yaml")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    os.replace(tmp, out / "results.tar.gz")
    (out / "gpu_profile.json").write_text(json.dumps(profile, indent=2) + "\n", encoding="utf-8")
    (out / STATE_FILE).write_text(json.dumps({"done": done}, indent=2) + "\n", encoding="utf-8")
    print(f"[node] wrote {out / 'results.tar.gz'} and {out / 'gpu_profile.json'} ({seconds / 60:.1f} min)", flush=True)
    return profile


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for results.tar.gz and gpu_profile.json")
    ap.add_argument("--only", nargs="*", help="run only these stages (bundle.json lists them)")
    ap.add_argument("--resume-from", type=Path, help="an earlier allocation's --out folder: its finished stages "
                    "are skipped and their outputs used")
    ap.add_argument("--dry-run", action="store_true", help="check the Python and the stage names, print what "
                    "would run, and unpack, train and write nothing")
    args = ap.parse_args(argv)
    if args.dry_run:
        info = bundle_info(BUNDLE)
        check_python(info)
        check_only(info, args.only)
        for stage, what in plan(info, BUNDLE, args.only):
            print(f"[node] {stage}: {what}")
        print(f"[node] dry run: Python {platform.python_version()}, bundle for {info.get('python_version')}; "
              f"results would go to {Path(args.out).resolve()}")
        return 0
    profile = run(Path(args.out).resolve(), only=args.only,
                  resume=args.resume_from.resolve() if args.resume_from else None)
    return 0 if profile["complete"] or args.only else 3


if __name__ == "__main__":
    raise SystemExit(main())
