"""Each stage depends on the manifest entries of the benchmark files its code reads, and on no other: a new
QuAIL file reruns what reads QuAIL, not Wikipedia or the StrategyQA models. Read statically: the names in the
``source_path("...")``/``source_sha256("...")`` calls of a stage's code deps (dvc.yaml) against the
``<entries>/<name>.json`` files it declares."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import yaml

from pipeline.common.layout import PATHS
from pipeline.common.manifest import NAMES

REPO = Path(__file__).resolve().parents[1]
READERS = {"source_path", "source_sha256"}


def _names_read(module: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) in READERS:
            arg = node.args[0] if node.args else None
            assert isinstance(arg, ast.Constant) and isinstance(arg.value, str), \
                f"{module}:{node.lineno}: name the benchmark file literally, so its stage's deps can be checked"
            names.add(arg.value)
    return names


def test_every_stage_declares_exactly_the_benchmark_files_it_reads():
    entries = str(PATHS.benchmark_sources.entries)
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    wrong = {}
    for name, stage in stages.items():
        if name == "benchmark_sources":
            continue
        body = stage.get("do", stage)
        deps = [str(d) for d in body.get("deps") or []]
        declared = {Path(d).stem for d in deps if d.startswith("${paths.benchmark_sources.entries}/")}
        assert not any("benchmark_sources.manifest" in d for d in deps), f"{name} depends on the whole manifest"
        read = set().union(*(_names_read(REPO / d) for d in deps if d.endswith(".py")))
        if declared != read:
            wrong[name] = {"declared": sorted(declared), "read": sorted(read)}
    assert not wrong, f"stages whose benchmark deps differ from what their code reads ({entries}): {wrong}"


def test_the_stage_writes_one_entry_per_file_as_the_manifest_holds_it(repo):
    manifest = json.loads((repo / PATHS.benchmark_sources.manifest).read_text(encoding="utf-8"))
    assert sorted(manifest) == sorted(NAMES)
    for name in NAMES:
        entry = json.loads((repo / PATHS.benchmark_sources.entries / f"{name}.json").read_text(encoding="utf-8"))
        assert entry == manifest[name]
