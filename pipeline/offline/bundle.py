"""``make gpu-bundle``: one folder that an offline GPU node can train every system from with plain ``python3``.

The folder is a small copy of the project root: the ``pipeline`` package and ``paths.yaml``; the inputs the
training and scoring stages read, exactly the data deps ``dvc.yaml`` declares for them (NLQuAD splits, the
StrategyQA contexts, the baselines' predictions, the benchmark manifest with the benchmark files it names copied
beside it); ``params.yaml`` with the GPU profile applied and validated here; the starting weights (the PyPI MiniLM
stored in bf16, 45 MB where fp32 is 88 MB; loaded back as fp32); the packages the node lacks, unpacked for its
Python (``site/``: pydantic, rouge-score, nltk and their dependencies; DVCLive's file format from
``pipeline/offline/dvclive_shim.py``, since DVCLive needs DVC); NLTK's punkt data. All but the code travels as
one ``payload.tar.xz`` (about 88 MB unpacked, the JSON and the packages shrink several times), which the node
command unpacks with the standard library on its first start. The bundle is built under a temporary name and
renamed, and refused when it is over the size limit.

    python -m pipeline.offline.bundle [--out gpu-bundle] [--profile infra/training/gpu-profile.yaml]
                                      [--python-version 3.12] [--max-mib 64]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml

from pipeline.stage_table import trained_stages

ROOT = Path(__file__).resolve().parents[2]
# what the node runs, in order (pipeline.offline.node): every stage the stage table marks as training,
# predicting with or scoring a model
NODE_STAGES = tuple(trained_stages())
# the benchmark files those stages read through their manifest entries
NODE_SOURCES = ("strategyqa_train", "strategyqa_eval", "quail_dev", "quail_challenge")
# packages the node image lacks (its list: Python 3.12, torch, transformers, accelerate, tokenizers, safetensors,
# numpy, scipy, pandas and what they pull in); versions from requirements.lock
NODE_PACKAGES = ("pydantic", "pydantic-core", "annotated-types", "typing-inspection", "typing-extensions",
                 "rouge-score", "absl-py", "nltk", "click", "joblib", "defusedxml", "six")
START_MODEL = "start_model"  # the bundle's folder of starting weights


def model_keys() -> tuple[str, ...]:
    """Every params key that names a model to load (``pipeline.params_trust``, from the schema). A function: the
    node imports this module before it unpacks pydantic, which the schema needs."""
    from pipeline.params_trust import MODEL_KEYS

    return tuple(sorted(MODEL_KEYS))

# data files named by a param (not by the benchmark manifest) that a node stage reads: copied into the bundle's
# sources/ and the param pointed there (a path outside the checkout never becomes a path outside the bundle)
FILE_KEYS = ("boolq_aux.file",)
DEFAULT_PROFILE = ROOT / "infra" / "training" / "gpu-profile.yaml"


class BundleError(RuntimeError):
    """The bundle cannot be built as asked; the message says what to do."""


def node_files(root: Path = ROOT) -> tuple[list[str], list[str], list[str]]:
    """(inputs, outputs, figures) of the node's stages from DVC's own reading of dvc.yaml: the data deps that none
    of them writes; what they write but the models (too large to bring back); and of those the files git keeps
    (``cache: false``: reports, headline metrics, curves, plots), which an import commits."""
    from dvc.repo import Repo

    from pipeline.common.layout import load_layout

    layout = load_layout(root / "paths.yaml")
    models = {str(p) for name, p in layout.leaves().items() if name.endswith((".model", ".model_dir"))}
    with Repo(str(root)) as repo:
        stages = {s.addressing: s for s in repo.index.stages}
        missing = [n for n in NODE_STAGES if n not in stages]
        if missing:
            raise BundleError(f"dvc.yaml has no stage {', '.join(missing)}")
        deps, outs, figures = set(), set(), set()
        for name in NODE_STAGES:
            stage = stages[name]
            outs |= {o.def_path for o in stage.outs}
            figures |= {o.def_path for o in stage.outs if not o.use_cache}
            deps |= {d.def_path for d in stage.deps if not d.def_path.endswith(".py")}
    return (sorted(d for d in deps - outs if d != "params.yaml"),
            sorted(o for o in outs if not any(o == m or o.startswith(m + "/") for m in models)), sorted(figures))


def check_inputs(root: Path, inputs: list[str]) -> None:
    """Every missing node input named at once, with the stages that make them: in a fresh clone these are a few
    data stages (a few minutes), not the whole ``dvc repro``."""
    missing = [rel for rel in inputs if not (root / rel).exists()]
    if not missing:
        return
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        makers = {o.def_path: s.name for s in repo.index.stages for o in s.outs}  # one dvc.yaml
    def maker(rel: str) -> str | None:  # a file inside an output folder is made by the folder's stage
        return next((name for out, name in makers.items() if rel == out or rel.startswith(out.rstrip("/") + "/")),
                    None)

    stages = sorted({maker(rel) for rel in missing} - {None})
    by_hand = [rel for rel in missing if maker(rel) is None]
    steps = [f"`dvc repro {' '.join(stages)}` makes them (or `dvc pull` them)"] if stages else []
    steps += [f"{', '.join(by_hand)}: no stage makes it; params.yaml names it"] if by_hand else []
    raise BundleError(f"{len(missing)} node input{'s are' if len(missing) > 1 else ' is'} missing: "
                      f"{', '.join(missing)}; " + "; ".join(steps))


def _lock_versions(root: Path) -> dict[str, str]:
    versions = {}
    for line in (root / "requirements.lock").read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith(("#", " ")):
            name, version = line.split("==", 1)
            versions[name.strip().lower()] = version.split()[0].split(";")[0].strip()
    return versions


def node_params(root: Path, profile: Path | None) -> dict[str, Any]:
    """params.yaml with the profile applied, the starting weights pointed at the bundle's copy where they are the
    PyPI MiniLM, validated here (the node validates again, every section but the Prefect schedule)."""
    from pipeline.experiments.profile import load_profile
    from pipeline.params import Params
    from pipeline.training.model_names import OFFLINE_MODEL

    data = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    overrides = load_profile(profile, root / "params.yaml") if profile else {}
    if "strategyqa_qa.max_steps" in overrides and "strategyqa_qa.control_max_steps" not in overrides:
        # params.yaml's control budget is a two-core choice: under a profile's budget the control would train
        # it with the profile's evaluation and checkpoint cadence (the tiny test profile: 400 steps, dev every 2)
        raise BundleError(f"{profile}: sets strategyqa_qa.max_steps but not strategyqa_qa.control_max_steps; set it "
                          "too (null: the facts control trains the settings' budget)")
    for key, value in overrides.items():
        section, name = key.split(".", 1)
        data[section][name] = value
    for body in data.values():  # the node trains its seeds one after another: a seed's own process would
        if isinstance(body, dict) and "parallel_runs" in body:  # validate its spec with pydantic, which it lacks
            body["parallel_runs"] = 1
    for key in model_keys():
        section, name = key.split(".", 1)
        if data[section][name] == OFFLINE_MODEL:
            data[section][name] = START_MODEL
        elif not Path(data[section][name]).is_dir():
            raise BundleError(f"{key}: {data[section][name]!r} is not the PyPI MiniLM or a local folder; an offline "
                              "node cannot download it (put the checkpoint in a folder and name it)")
    for key in FILE_KEYS:
        section, name = key.split(".", 1)
        data[section][name] = _source_name(key, data[section][name])
    if data["distributed"]["nnodes"] != 1:
        raise BundleError("distributed.nnodes: the bundle runs on one node")
    Params.model_validate(data)
    return data


def _source_name(key: str, path: str) -> str:
    """Where a ``FILE_KEYS`` file lies in the bundle: ``sources/boolq_aux.file.jsonl``."""
    return (Path("sources") / f"{key}{''.join(Path(path).suffixes)}").as_posix()


def _copy_param_files(root: Path, dest: Path, inputs: list[str]) -> list[str]:
    """The ``FILE_KEYS`` files into the bundle's sources/; returns the inputs left to copy as they are."""
    data = yaml.safe_load((root / "params.yaml").read_text(encoding="utf-8"))
    named = {}
    for key in FILE_KEYS:
        section, name = key.split(".", 1)
        named[data[section][name]] = _source_name(key, data[section][name])
    for src, rel in named.items():
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / src, target)
    return [i for i in inputs if i not in named]


def source_state(root: Path, params: Path) -> dict[str, Any]:
    """What a reader needs to tie a GPU run to the code: the commit the bundle was built from, whether the
    checkout had changes git did not commit (then the commit alone does not say what ran), and the sha256 of the
    params the node runs with."""
    def git(*args: str) -> str:
        proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
        return proc.stdout.strip() if proc.returncode == 0 else ""

    from pipeline.common.layout import PATHS

    nlquad = root / PATHS.build_nlquad.report  # the NLQuAD build the node trains on: calibrated, or drifted
    calibration = (json.loads(nlquad.read_text(encoding="utf-8")).get("calibration") or {}) if nlquad.exists() else {}
    return {"commit": git("rev-parse", "HEAD") or None,
            "uncommitted_changes": bool(git("status", "--porcelain", "--untracked-files=no")),
            "params_sha256": hashlib.sha256(params.read_bytes()).hexdigest(),
            "nlquad_calibration": {k: calibration[k] for k in ("within_tolerance", "drift") if k in calibration}
            or None}


def _copy_inputs(root: Path, dest: Path, inputs: list[str]) -> None:
    for rel in inputs:
        if not (dest / rel).resolve().is_relative_to(dest.resolve()):
            raise BundleError(f"{rel}: a node input outside the checkout; name it in bundle.FILE_KEYS so it is "
                              "copied into the bundle's sources/")
        src = root / rel
        if not src.exists():
            raise BundleError(f"{rel} is missing: run `dvc repro` (or `dvc pull`) first; the node trains from the "
                              "pipeline's own inputs")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, dirs_exist_ok=True)  # a folder and a file inside it may both be deps
        else:
            shutil.copy2(src, target)


def _copy_sources(root: Path, dest: Path) -> None:
    """The benchmark files the node's stages read, beside their manifest entries, which name them there."""
    from pipeline.common.layout import PATHS

    for name in NODE_SOURCES:
        entry_path = dest / PATHS.benchmark_sources.entries / f"{name}.json"
        if not entry_path.exists():  # copied with the node stages' deps
            raise BundleError(f"{entry_path.relative_to(dest)} is missing: run `dvc repro benchmark_sources` first")
        entry = json.loads(entry_path.read_text(encoding="utf-8"))
        src = Path(entry["path"]) if Path(entry["path"]).is_absolute() else root / entry["path"]
        digest = hashlib.sha256(src.read_bytes()).hexdigest()
        if digest != entry["sha256"]:
            raise BundleError(f"{src} changed since the benchmark_sources stage read it: run `dvc repro` first")
        rel = Path("sources") / f"{name}{''.join(src.suffixes)}"
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
        entry_path.write_text(json.dumps({**entry, "path": rel.as_posix()}, indent=2, sort_keys=True) + "\n",
                              encoding="utf-8")


def tracked_code(root: Path) -> list[str]:
    """The files of ``pipeline/`` that git tracks, and ``paths.yaml``: what the bundle takes as code. An untracked
    file there (a ``pipeline/.env`` holding credentials, a scratch script) is not the pipeline's and stays home;
    a tracked symbolic link is refused, so no file outside the checkout (its target) travels."""
    proc = subprocess.run(["git", "ls-files", "-z", "--", "pipeline", "paths.yaml"], cwd=root, capture_output=True)
    if proc.returncode != 0:
        raise BundleError(f"{root} is not a git checkout: the bundle takes the code git tracks "
                          f"({proc.stderr.decode(errors='replace').strip()})")
    files = sorted(f for f in proc.stdout.decode("utf-8").split("\0") if f)
    links = [f for f in files if (root / f).is_symlink()]
    if links:
        raise BundleError(f"{', '.join(links)}: a symbolic link in the code; the bundle copies files, never what a "
                          "link points to")
    return [f for f in files if (root / f).is_file()]  # a tracked file deleted in the workspace is not sent


def _copy_code(root: Path, dest: Path) -> None:
    for rel in tracked_code(root):
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)


def _start_model(dest: Path) -> None:
    """The PyPI MiniLM's transformers files, weights in bf16 (half the bytes), config saying float32 so that
    ``from_pretrained`` loads them back as fp32 master weights."""
    import torch
    from safetensors.torch import load_file, save_file

    from pipeline.training.model_names import OFFLINE_MODEL, resolve_model_path

    src = Path(resolve_model_path(OFFLINE_MODEL))
    target = dest / START_MODEL
    target.mkdir(parents=True)
    for name in ("config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "vocab.txt"):
        shutil.copy2(src / name, target / name)
    tensors = load_file(str(src / "model.safetensors"))
    save_file({k: v.to(torch.bfloat16) if v.is_floating_point() else v for k, v in tensors.items()},
              str(target / "model.safetensors"), metadata={"format": "pt"})
    config = json.loads((target / "config.json").read_text(encoding="utf-8"))
    config.update({"torch_dtype": "float32", "dtype": "float32"})
    (target / "config.json").write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")


def _site_packages(root: Path, dest: Path, python_version: str, platform: str) -> None:
    versions = _lock_versions(root)
    pins = [f"{p}=={versions[p]}" for p in NODE_PACKAGES]
    uv = Path(sys.executable).with_name("uv")  # make setup installs uv into the project's venv
    if not uv.exists():
        uv = Path(shutil.which("uv") or "uv")
    # rouge-score is published as a source package only (pure Python: its wheel built here runs on any Python);
    # pydantic-core is compiled, so it must come as the wheel built for the node's Python and platform
    cmd = [str(uv), "pip", "install", "--quiet", "--no-deps", "--only-binary", "pydantic-core",
           "--target", str(dest / "site"), "--python-version", python_version, "--python-platform", platform, *pins]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        raise BundleError(f"could not fetch the node's packages for Python {python_version} ({platform}):\n"
                          f"{proc.stderr[-2000:]}")
    shim = dest / "site" / "dvclive"
    shim.mkdir()
    shutil.copy2(root / "pipeline" / "offline" / "dvclive_shim.py", shim / "__init__.py")


def _punkt(dest: Path) -> None:
    from pipeline.nlquad.punkt_data import LANGUAGE, install

    install(dest / "nltk_data")
    assert (dest / "nltk_data" / "tokenizers" / "punkt_tab" / LANGUAGE).is_dir()


PAYLOAD = "payload.tar.xz"
UNPACKED_MARK = ".payload-unpacked"
KEPT_OUT_OF_PAYLOAD = ("pipeline", "paths.yaml")  # what `python3 -m pipeline.offline.node` needs to start


def _pack_payload(folder: Path) -> None:
    """Everything but the code into one xz archive (the node unpacks it with the standard library): the inputs,
    the packages and the JSON data shrink several times, which puts the bundle under the size limit."""
    members = sorted(p for p in folder.iterdir() if p.name not in KEPT_OUT_OF_PAYLOAD)
    with tarfile.open(folder / PAYLOAD, "w:xz", preset=6) as tar:
        for p in members:
            tar.add(p, arcname=p.name, filter=_normalise)
    for p in members:
        shutil.rmtree(p) if p.is_dir() else p.unlink()


def _normalise(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def build_bundle(out: Path, profile: Path | None = DEFAULT_PROFILE, python_version: str = "3.12",
                 platform: str = "x86_64-manylinux_2_28", max_mib: float = 64.0, root: Path = ROOT) -> dict:
    out = Path(out)
    data = node_params(root, profile)
    inputs, outputs, _ = node_files(root)
    check_inputs(root, inputs)
    tmp = out.with_name(f".{out.name}.partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        _copy_code(root, tmp)
        _copy_inputs(root, tmp, _copy_param_files(root, tmp, inputs))
        _copy_sources(root, tmp)
        (tmp / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
        source = source_state(root, tmp / "params.yaml")  # before the payload packs params.yaml away
        _start_model(tmp)
        _site_packages(root, tmp, python_version, platform)
        _punkt(tmp)
        unpacked = folder_bytes(tmp)
        _pack_payload(tmp)
        size = folder_bytes(tmp)
        info = {"inputs": inputs, "outputs": outputs, "sources": list(NODE_SOURCES), "stages": list(NODE_STAGES),
                "source": source,
                "profile": str(profile.relative_to(root)) if profile and profile.is_relative_to(root) else
                (str(profile) if profile else None),
                "python_version": python_version, "platform": platform, "bytes": size, "bytes_unpacked": unpacked,
                "command": "python3 -m pipeline.offline.node --out OUT"}
        (tmp / "bundle.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
        if size > max_mib * 2**20:
            largest = sorted((p for p in tmp.rglob("*") if p.is_file()), key=lambda p: -p.stat().st_size)[:5]
            raise BundleError(f"the bundle is {size / 2**20:.1f} MiB, over the {max_mib:g} MiB limit; largest: "
                              + ", ".join(f"{p.relative_to(tmp)} ({p.stat().st_size / 2**20:.1f} MiB)" for p in largest))
        shutil.rmtree(out, ignore_errors=True)
        os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return info


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gpu-bundle")
    ap.add_argument("--profile", default=str(DEFAULT_PROFILE), help="params overrides (section.key: value); "
                    "'none' for params.yaml as it is")
    ap.add_argument("--python-version", default="3.12", help="the node's Python (its packages are fetched for it)")
    ap.add_argument("--platform", default="x86_64-manylinux_2_28")
    ap.add_argument("--max-mib", type=float, default=64.0)
    args = ap.parse_args(argv)
    from pipeline.experiments.sweep import SweepError

    profile = None if args.profile == "none" else Path(args.profile).resolve()
    try:
        info = build_bundle(Path(args.out), profile, args.python_version, args.platform, args.max_mib)
    except (BundleError, SweepError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {info['bytes'] / 2**20:.1f} MiB, {len(info['stages'])} stages; on the node, in that folder: "
          f"{info['command']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
