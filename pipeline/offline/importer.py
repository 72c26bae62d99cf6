"""``make gpu-import DIR=...``: an offline node's results as a git revision that DVC compares with the CPU run.

The node sends back ``results.tar.gz`` and ``gpu_profile.json`` (``pipeline.offline.node``). The import checks
the archive as input from a stranger: regular files only, each one an output that ``dvc.yaml`` declares for the
node's stages, no path outside the checkout, sizes capped; and its params.yaml may differ from this checkout's
only in the training sections (the profile), else the bundle came from another state of the pipeline. It then
commits, on a branch of its own (``gpu/<name>``, made in a temporary git worktree, so the workspace and its
DVC cache are untouched): params.yaml with the node's training params (comments kept), the reports, headline
metrics, DVCLive curves and plots the node wrote, and ``benchmarks/results/gpu_profile.json``. dvc.lock is left
as it was: the node's models are not in the cache, so ``dvc status`` on that branch says the training stages
were not reproduced here, which is true. Compare with

    dvc metrics diff main gpu/<name>        dvc plots diff main gpu/<name>        make exps (git revisions)

The node's per-question predictions (every file under ``data/predictions/``, checked against the sha256 the
node recorded) go to ``benchmarks/results/gpu_predictions.json`` on the branch, so a reader can recompute every
row of the GPU table, with any interval; the profile carries the commit and params hash the bundle was built
from. On a GPU's results, both files are also written to the workspace, to commit beside the CPU benchmarks.

    python -m pipeline.offline.importer DIR [--name NAME] [--base REV]
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from pydantic import ValidationError

from pipeline.common.bounded_tar import ArchiveLimitError, open_bounded, quoted
from pipeline.common.plain_yaml import PlainYAMLError, load_plain_yaml
from pipeline.experiments.overrides import override
from pipeline.experiments.sweep import SweepError, check_value
from pipeline.offline.bundle import ROOT, START_MODEL, model_keys, node_files
from pipeline.params import Params, format_validation_error
from pipeline.params_trust import INFRASTRUCTURE, PROFILE_SECTIONS, NotRunSettable, check_run_settable

TRAINING_SECTIONS = PROFILE_SECTIONS
MAX_MEMBER_BYTES = 64 * 2**20
MAX_TOTAL_BYTES = 256 * 2**20  # all members together: a node's outputs are a few MiB
MAX_MEMBERS = 20_000
# the decompressed stream: every member's bytes and a 512-byte header (more for a long name) per entry
MAX_DECOMPRESSED_BYTES = MAX_TOTAL_BYTES + MAX_MEMBERS * 2048
MAX_PROFILE_BYTES = 4 * 2**20  # gpu_profile.json: a node writes a few KB
PROFILE_FILE = "benchmarks/results/gpu_profile.json"
PREDICTIONS_FILE = "benchmarks/results/gpu_predictions.json"


class ImportError_(RuntimeError):
    """The results cannot be imported; the message names what is wrong."""


def _allowed(name: str, outputs: list[str]) -> bool:
    return name == "params.yaml" or any(name == o or name.startswith(o.rstrip("/") + "/") for o in outputs)


MAX_JSON_DEPTH = 32  # a node's profile and predictions nest a few levels: {"runs": {seed: {qid: {...}}}}


def node_json(data: str | bytes, where: object) -> Any:
    """A JSON file a node wrote, parsed, and refused in one sentence when it is not JSON or nests deeper than
    :data:`MAX_JSON_DEPTH` (Python's parser raises RecursionError on deep nesting, and what reads it after
    recurses too)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise ImportError_(f"{where}: nested too deep to parse: not a node's file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImportError_(f"{where}: not JSON ({quoted(str(exc))})") from None
    todo, depth = [(value, 1)], 0
    while todo:
        item, level = todo.pop()
        depth = max(depth, level)
        if depth > MAX_JSON_DEPTH:
            raise ImportError_(f"{where}: nested more than {MAX_JSON_DEPTH} levels deep: not a node's file")
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        todo += [(c, level + 1) for c in children if isinstance(c, (dict, list))]
    return value


def _members(tar: tarfile.TarFile, archive: Path):
    """The archive's entries one at a time; a bound crossed or a broken header mid-way is the importer's error."""
    entries = iter(tar)
    while True:
        try:
            m = next(entries)
        except StopIteration:
            return
        except ArchiveLimitError as exc:
            raise ImportError_(str(exc)) from None
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ImportError_(f"{archive}: a broken entry ({quoted(str(exc))})") from None
        yield m


def read_results(folder: Path, outputs: list[str]) -> tuple[dict[str, bytes], dict[str, Any]]:
    """``{path: bytes}`` of the archive's declared outputs (and its params.yaml), and the profile."""
    archive, profile_path = folder / "results.tar.gz", folder / "gpu_profile.json"
    for f in (archive, profile_path):
        if not f.is_file():
            raise ImportError_(f"{f} is missing: DIR is the folder the node command wrote (--out)")
    if profile_path.stat().st_size > MAX_PROFILE_BYTES:  # checked before reading: the node writes a few KB
        raise ImportError_(f"{profile_path}: {profile_path.stat().st_size} bytes, over {MAX_PROFILE_BYTES}: "
                           "not a node's gpu_profile.json")
    profile = node_json(profile_path.read_bytes(), profile_path)
    if not isinstance(profile, dict) or not isinstance(profile.get("device"), str):
        raise ImportError_(f"{profile_path}: not a gpu_profile.json (no device)")
    if profile.get("complete") is False:
        raise ImportError_(f"{profile_path}: the node stopped before {', '.join(profile.get('stages_left') or [])}; "
                           f"run it again with --resume-from this folder and import that run's folder")
    files: dict[str, bytes] = {}
    try:
        # the decompressed stream is counted as read, headers included, and a long-name or pax header over a
        # few KB is refused from its size (pipeline.common.bounded_tar): tarfile reads those before the loop below
        tar = open_bounded(archive, "gz", MAX_DECOMPRESSED_BYTES)
    except ArchiveLimitError as exc:
        raise ImportError_(str(exc)) from None
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ImportError_(f"{archive}: not a gzipped tar archive ({quoted(str(exc))})") from None
    count = total = 0
    with tar:
        # entries are read one at a time and counted as they come, so an archive of millions of tiny entries is
        # refused at the cap, not after all of them are read; a member's bytes are read only once it has passed
        for m in _members(tar, archive):
            count += 1
            if count > MAX_MEMBERS:
                raise ImportError_(f"{archive}: more than {MAX_MEMBERS} entries: not a node's outputs")
            tar.members = []  # TarFile keeps every header it has read: drop them, only the count matters
            if m.isdir():
                continue
            path = PurePosixPath(m.name)
            if not m.isfile() or path.is_absolute() or ".." in path.parts or m.name != path.as_posix():
                raise ImportError_(f"{archive}: entry {quoted(m.name)} is not a plain relative file")
            if not _allowed(m.name, outputs):
                raise ImportError_(f"{archive}: {quoted(m.name)} is not an output of the node's stages in dvc.yaml")
            if m.size > MAX_MEMBER_BYTES:
                raise ImportError_(f"{archive}: {quoted(m.name)} is {m.size} bytes, over {MAX_MEMBER_BYTES}")
            total += m.size
            if total > MAX_TOTAL_BYTES:
                raise ImportError_(f"{archive}: over {MAX_TOTAL_BYTES} bytes in all: not a node's outputs")
            try:
                files[m.name] = tar.extractfile(m).read()
            except ArchiveLimitError as exc:
                raise ImportError_(str(exc)) from None
    if "params.yaml" not in files:
        raise ImportError_(f"{archive}: no params.yaml (the params the node ran with)")
    return files, profile


def training_overrides(node_params: dict, base_params: dict) -> list[str]:
    """The ``section.key=value`` overrides that turn the base params into the node's; refused when the node's
    differ outside the training sections (the bundle was built from another state of the pipeline)."""
    other = sorted(s for s in set(node_params) | set(base_params)
                   if s not in TRAINING_SECTIONS and node_params.get(s) != base_params.get(s))
    if other:
        raise ImportError_(f"the node's params differ from this checkout's in {', '.join(other)}: the bundle was "
                           "built from another params.yaml; import into the commit it was built from (--base)")
    missing = [s for s in TRAINING_SECTIONS if not isinstance(node_params.get(s), dict)]
    if missing:
        raise ImportError_(f"the node's params.yaml has no {', '.join(missing)} section (or not as a mapping): "
                           "not the params a node ran with")
    overrides, chosen = [], {}
    models = set(model_keys())
    for section in TRAINING_SECTIONS:
        for key, value in node_params[section].items():
            name = f"{section}.{key}"
            if name in models and value == START_MODEL:
                continue  # the bundle's copy of the checkout's own starting weights
            if name in INFRASTRUCTURE:
                continue  # where the node ran (its device) describes the node; the branch keeps this checkout's
            if base_params[section].get(key) != value:
                chosen[name] = value
                overrides.append(override(name, value))
    try:  # the archive is a stranger's file: it may change the science, like a run, and nothing else
        check_run_settable(chosen, "the node's params")
        for name, value in chosen.items():
            check_value(name, value)  # no ${...}: DVC would resolve it here, secrets included, and commit it
    except (NotRunSettable, SweepError) as exc:
        raise ImportError_(str(exc)) from None
    merged = copy.deepcopy(base_params)
    for name, value in chosen.items():
        section, key = name.split(".", 1)
        merged[section][key] = value
    try:  # every value valid for its key, as the params schema says (a negative step count, a list for a number)
        Params.model_validate(merged)
    except ValidationError as exc:
        raise ImportError_(format_validation_error(exc, "the node's params")) from None
    return overrides


def _git(args: list[str], cwd: Path) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    if proc.returncode:
        raise ImportError_(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout


PLOT_SUFFIXES = (".csv", ".tsv")  # plot data and DVCLive curves: what dvc plots draws


def check_plot_data(files: dict[str, bytes]) -> None:
    """Plot data and curves are drawn in a browser by ``dvc plots diff``, which embeds them in a ``<script>``:
    the pipeline's writers never write ``<`` there (``pipeline.common.safe_text``), so a file that holds one
    was not written by them, and is refused before anything is committed."""
    for rel, data in files.items():
        if rel.endswith(PLOT_SUFFIXES) and b"<" in data:
            raise ImportError_(f"{rel}: plot data with '<' in it; the node's writers escape it, so this file is "
                               "not theirs (it would run in the page dvc plots diff writes)")


MARKUP_FREE_SUFFIXES = (".md", ".yaml", ".yml")  # rendered (a report on GitHub, DVC's tables): no raw HTML
CONTROL_FILES = ("dvc.yaml", "dvc.lock", ".gitignore", ".dvcignore", ".gitattributes", ".gitmodules")


def check_text_files(files: dict[str, bytes]) -> None:
    """What a node sends that is rendered or read as control: the pipeline's Markdown and YAML writers escape
    ``<`` (``pipeline.common.safe_text``), so raw HTML in a ``.md`` or ``.yaml`` file is not theirs; and no
    output folder of a node's stages holds a ``dvc.yaml`` (DVC would read its stages, from anywhere in the
    checkout), a ``.dvc`` file or a git control file. Refused before anything is committed."""
    for rel, data in files.items():
        name = PurePosixPath(rel).name
        if name in CONTROL_FILES or name.endswith(".dvc"):
            raise ImportError_(f"{rel}: a DVC or git control file; no node stage writes one, and DVC or git would "
                               "act on it")
        if rel.endswith(MARKUP_FREE_SUFFIXES) and b"<" in data:
            raise ImportError_(f"{rel}: raw markup ('<') in a report; the node's writers escape it, so this file "
                               "is not theirs")


def branch_name(name: str | None, device: str) -> str:
    raw = name or re.sub(r"[^a-z0-9]+", "-", device.lower()).strip("-")[:40]
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]{0,63}", raw):
        raise ImportError_(f"--name {raw!r}: use letters, digits, '.', '_' and '-' (up to 64)")
    return f"gpu/{raw}"


def gathered_predictions(files: dict[str, bytes], profile: dict[str, Any]) -> str:
    """The node's prediction files as one JSON document ``{path: content}``, each checked against the digest
    the node recorded: a file that differs, or one the node did not record, is refused (they would not be the
    predictions behind the profile's figures)."""
    from pipeline.common.layout import PATHS

    recorded = profile.get("predictions_sha256") or {}
    out = {}
    for rel, data in sorted(files.items()):
        if not rel.startswith(f"{PATHS.predictions.as_posix()}/"):
            continue
        if recorded.get(rel) != hashlib.sha256(data).hexdigest():
            raise ImportError_(f"{rel}: not the predictions the node recorded in gpu_profile.json "
                               "(predictions_sha256); the archive and the profile are not of one run")
        out[rel] = node_json(data, rel)
    missing = sorted(set(recorded) - set(out))
    if missing:
        raise ImportError_(f"gpu_profile.json records predictions the archive lacks: {missing[:3]}")
    return json.dumps({"source": profile.get("source"), "predictions": out}, sort_keys=True) + "\n"


def _pending_file(root: Path) -> Path:
    """Where an import in progress records its branch and worktree (in git's own folder): a run killed before it
    finished is cleaned up by the next one."""
    return Path(_git(["rev-parse", "--absolute-git-dir"], root).strip()) / "qa-pipeline-gpu-import.json"


def _remove_import(root: Path, branch: str, tree: Path) -> None:
    subprocess.run(["git", "worktree", "remove", "--force", "--force", str(tree)], cwd=root, capture_output=True)
    subprocess.run(["git", "worktree", "prune"], cwd=root, capture_output=True)
    subprocess.run(["git", "branch", "-D", branch], cwd=root, capture_output=True)
    _pending_file(root).unlink(missing_ok=True)


def clean_killed_import(root: Path) -> str | None:
    """The branch and (locked) worktree an import killed before it finished left behind, removed; its branch
    name, or None when no import was cut short. Only what that import recorded is removed."""
    pending = _pending_file(root)
    if not pending.exists():
        return None
    try:
        left = json.loads(pending.read_text(encoding="utf-8"))
        branch, tree = str(left["branch"]), Path(str(left["tree"]))
    except (ValueError, KeyError, TypeError):
        pending.unlink(missing_ok=True)
        return None
    if not branch.startswith("gpu/"):  # written by this module only; anything else is not ours to delete
        pending.unlink(missing_ok=True)
        return None
    _remove_import(root, branch, tree)
    return branch


def check_source(profile: dict[str, Any], params: bytes, root: Path) -> None:
    """The code and params a profile says it ran, checked against what is here: its commit must be one this
    repository holds (else its figures trace to nothing a reader can check out) and its params digest must be
    the archive's own params.yaml (else the two files are not of one run)."""
    source = profile.get("source")
    if source is None:
        return  # a run from before the node recorded its source: the docs' table says so
    if not isinstance(source, dict):
        raise ImportError_("gpu_profile.json: its source is not a mapping")
    commit, digest = source.get("commit"), source.get("params_sha256")
    if commit is not None:
        if not (isinstance(commit, str) and re.fullmatch(r"[0-9a-f]{40}", commit)):
            raise ImportError_(f"gpu_profile.json: source.commit {quoted(commit)} is not a commit id")
        if subprocess.run(["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=root,
                          capture_output=True).returncode != 0:
            raise ImportError_(f"gpu_profile.json: source.commit {commit} is not in this repository: fetch it, or "
                               "build the bundle from a commit of this repository")
    if digest is not None and digest != hashlib.sha256(params).hexdigest():
        raise ImportError_("gpu_profile.json: source.params_sha256 is not the sha256 of the archive's params.yaml: "
                           "the profile and the archive are not of one run")


def import_results(folder: Path, name: str | None = None, base: str = "HEAD", root: Path = ROOT) -> dict:
    from dvc.utils.hydra import apply_overrides

    cleaned = clean_killed_import(root)
    if cleaned:
        print(f"removed {cleaned} and its worktree, left by an import that was stopped before it finished",
              file=sys.stderr)
    _, outputs, figures = node_files(root)
    files, profile = read_results(folder, outputs)
    check_source(profile, files["params.yaml"], root)
    branch = branch_name(name, profile["device"])
    if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], cwd=root,
                      capture_output=True).returncode == 0:
        raise ImportError_(f"branch {branch} exists: choose another --name (nothing was changed)")
    base_params = yaml.safe_load(_git(["show", f"{base}:params.yaml"], root))
    try:
        node_params = load_plain_yaml(files["params.yaml"], f"{folder}: results.tar.gz params.yaml")
    except PlainYAMLError as exc:
        raise ImportError_(str(exc)) from None
    except RecursionError:  # a list nested tens of thousands deep: no params file is
        raise ImportError_(f"{folder}: results.tar.gz params.yaml nests too deep to be a params file") from None
    if not isinstance(node_params, dict) or any(not isinstance(v, dict) for v in node_params.values()):
        raise ImportError_(f"{folder}: the node's params.yaml is not a mapping of sections")
    overrides = training_overrides(node_params, base_params)
    gpu = not profile["device"].startswith("cpu")
    predictions = gathered_predictions(files, profile)
    kept = [p for p in files if p != "params.yaml" and _allowed(p, figures)]
    check_plot_data({p: files[p] for p in kept})
    check_text_files({p: files[p] for p in files if p != "params.yaml"})
    with tempfile.TemporaryDirectory(prefix="gpu-import-") as tmp:
        tree = Path(tmp) / "tree"
        pending = _pending_file(root)
        pending.write_text(json.dumps({"branch": branch, "tree": str(tree)}), encoding="utf-8")
        _git(["worktree", "add", "--quiet", "-b", branch, str(tree), base], root)
        try:
            if overrides:
                apply_overrides(str(tree / "params.yaml"), overrides)
            for rel in kept:
                target = tree / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(files[rel])
            (tree / PROFILE_FILE).write_text(json.dumps(profile, indent=2) + "\n", encoding="utf-8")
            (tree / PREDICTIONS_FILE).write_text(predictions, encoding="utf-8")
            _git(["add", "--", "params.yaml", PROFILE_FILE, PREDICTIONS_FILE, *kept], tree)
            _git(["-c", "user.name=qa-pipeline gpu-import", "-c", "user.email=gpu-import@localhost", "commit",
                  "--quiet", "-m", f"GPU results from {profile['device']}: {len(kept)} files, "
                  f"{len(overrides)} training params ({profile.get('profile') or 'params.yaml'})"], tree)
        except BaseException:
            _remove_import(root, branch, tree)
            raise
        _git(["worktree", "remove", "--force", str(tree)], root)
        pending.unlink(missing_ok=True)
    if gpu:
        (root / PROFILE_FILE).write_text(json.dumps(profile, indent=2) + "\n", encoding="utf-8")
        (root / PREDICTIONS_FILE).write_text(predictions, encoding="utf-8")
    return {"branch": branch, "files": len(kept), "overrides": overrides, "device": profile["device"],
            "profile_in_workspace": gpu}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", help="the folder the node command wrote (results.tar.gz, gpu_profile.json)")
    ap.add_argument("--name", help="branch gpu/<name> (default: from the device)")
    ap.add_argument("--base", default="HEAD", help="the commit the bundle was built from (default HEAD)")
    args = ap.parse_args(argv)
    try:
        result = import_results(Path(args.dir), args.name, args.base)
    except ImportError_ as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{result['branch']}: {result['files']} files from {result['device']}, training params: "
          f"{' '.join(result['overrides']) or 'as in params.yaml'}")
    print(f"compare: dvc metrics diff {args.base} {result['branch']}   |   dvc plots diff {args.base} {result['branch']}")
    if result["profile_in_workspace"]:
        print(f"{PROFILE_FILE} written to the workspace: commit it beside the CPU benchmarks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
