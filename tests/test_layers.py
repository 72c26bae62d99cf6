"""Imports only run down. ``pipeline``'s folders form layers: the library (``common`` at the bottom, then the
packages of each track and the training loop), the params schema that composes their sections, the stages and
the launcher that run them, the tools above (``experiments``, ``offline``), and ``flows`` (Prefect) on top. A
module may import its own layer or lower ones, never higher, and no two folders import each other through any
chain (every import counts, lazy ones inside functions too: they run)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PIPELINE = REPO / "pipeline"

# low to high; a name is a folder of pipeline/ or one of its top-level modules
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"common"}),
    frozenset({"wayback", "sample", "crawl", "nlquad", "search", "strategyqa", "quail", "span_qa", "training",
               "wiki", "difficulty"}),
    frozenset({"params", "params_trust"}),
    frozenset({"stages", "launcher", "stage_table"}),
    frozenset({"experiments", "offline"}),
)
FLOWS = "flows"


def _unit(module: str) -> str | None:
    """The layer unit of ``pipeline.x.y`` (x), ``flows`` for flows.*, None for anything else."""
    parts = module.split(".")
    if parts[0] == FLOWS:
        return FLOWS
    if parts[0] != "pipeline" or len(parts) < 2:
        return None
    return parts[1]


def _imports() -> list[tuple[str, str, str]]:
    """(importer's unit, imported unit, where) for every import of the project's code by the project's code."""
    found = []
    for path in [*PIPELINE.rglob("*.py"), *(REPO / FLOWS).rglob("*.py")]:
        rel = path.relative_to(REPO).with_suffix("")
        source = _unit(".".join(rel.parts)) or _unit(".".join(rel.parts[:-1]))
        if rel.parts[0] == "pipeline" and len(rel.parts) == 2:
            source = rel.parts[1] if rel.parts[1] != "__init__" else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                target = _unit(name)
                if source and target and target != source:
                    found.append((source, target, f"{path.relative_to(REPO)}:{node.lineno}"))
    return found


def _layer(unit: str) -> int:
    if unit == FLOWS:
        return len(LAYERS)
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError(f"pipeline/{unit} is in no layer of tests/test_layers.py: place it")


def test_every_folder_has_a_layer():
    units = {p.name for p in PIPELINE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    units |= {p.stem for p in PIPELINE.glob("*.py") if p.stem != "__init__"}
    for unit in sorted(units):
        _layer(unit)


def test_no_import_runs_up_a_layer():
    upward = sorted({(where, f"{s} -> {t}") for s, t, where in _imports() if _layer(t) > _layer(s)})
    assert not upward, "imports from a lower layer to a higher one:\n" + "\n".join(f"{w}: {e}" for w, e in upward)


def test_no_two_folders_import_each_other_through_any_chain():
    graph: dict[str, set[str]] = {}
    for source, target, _ in _imports():
        graph.setdefault(source, set()).add(target)

    def reaches(start: str, goal: str) -> bool:
        seen, todo = set(), [start]
        while todo:
            unit = todo.pop()
            for nxt in graph.get(unit, ()):
                if nxt == goal:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    cycles = sorted({tuple(sorted((s, t))) for s, targets in graph.items() for t in targets if reaches(t, s)})
    assert not cycles, f"folders that import each other (through some chain): {cycles}"
