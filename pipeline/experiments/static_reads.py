"""What a stage module reads, seen statically: the ``PATHS...`` entries and the ``params.<section>[.<key>]``
settings it names. One reading for two users: the generator (``stage_deps``), which writes a new stage's
dvc.yaml entry from it, and the layout tests, which hold every committed entry to it (a path or key a stage
reads without declaring it is an input ``dvc repro`` does not watch).

Parsed, never imported. A chain through a variable subscript (``PATHS.quail_mc[variant].predictions``) keeps
``*`` for the variable part; an f-string subscript keeps its literal parts (``PATHS[f"train_{k}"]`` ->
``train_*``).
"""

from __future__ import annotations

import ast
import fnmatch
from pathlib import Path


def chain(node: ast.AST) -> list[str] | None:
    """``PATHS.a[x].b`` -> ["PATHS", "a", "*", "b"]; None when the expression does not start at a name."""
    parts: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        elif isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant):
                parts.append(str(key.value))
            elif isinstance(key, ast.JoinedStr):
                parts.append("".join(v.value if isinstance(v, ast.Constant) else "*" for v in key.values))
            else:
                parts.append("*")
            node = node.value
        elif isinstance(node, ast.Name):
            parts.append(node.id)
            return parts[::-1]
        else:
            return None


def outermost_chains(tree: ast.AST, root: str) -> set[tuple[str, ...]]:
    """Every longest attribute/subscript chain from the name ``root``, without the root (``PATHS.split.report``
    -> ("split", "report")); ``.keys()``/``.leaves()`` walks are not reads of an entry."""
    chains: set[tuple[str, ...]] = set()
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Subscript)) and id(node) not in inner:
            found = chain(node)
            if found and found[0] == root:
                chains.add(tuple(found[1:]))
                sub = node.value
                while isinstance(sub, (ast.Attribute, ast.Subscript)):
                    inner.add(id(sub))
                    sub = sub.value
    return {c for c in chains if c and c[-1] not in ("keys", "leaves")}


def param_reads(path: Path) -> set[str]:
    """``params.<section>[.<key>]`` read in a module, by the name ``params`` (every stage's argument), and
    through a local alias (``p = params.search`` then ``p.k1`` reads ``search.k1``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reads = {".".join(c[:1] if c[1:2] and c[1].startswith("model_") else c[:2])  # p.model_dump(): the section
             for c in outermost_chains(tree, "params") if not c[0].startswith("model_")}
    for func in (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(func):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                    and isinstance(node.value, ast.Attribute) and chain(node.value) is not None
                    and chain(node.value)[0] == "params" and len(chain(node.value)) == 2):
                section = chain(node.value)[1]
                keys = {c[0] for c in outermost_chains(func, node.targets[0].id)}
                reads |= {f"{section}.{k}" for k in keys if not k.startswith("model_")}
    return reads


def path_reads(path: Path, leaves: dict[tuple[str, ...], Path]) -> dict[str, list[tuple[str, ...]]]:
    """Each ``PATHS...`` chain in a module (dotted, ``*`` for a variable part) -> the paths.yaml entries it can
    name (keys of ``leaves``, without the leading "paths"); a chain that names none (``PATHS.split.nowhere``)
    maps to []. A chain that goes on past an entry (``PATHS.split.report.read_text()``) names that entry; one
    that stops at a group (``PATHS.split``) names every entry below it."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for found in outermost_chains(ast.parse(path.read_text(encoding="utf-8")), "PATHS"):
        matches: list[tuple[str, ...]] = []
        for n in range(len(found), 0, -1):
            pattern = ".".join(found[:n])
            matches = [k for k in leaves if fnmatch.fnmatch(".".join(k), pattern)]  # an entry, then a method
            if not matches and n == len(found):  # the chain stops at a group: every entry below it
                matches = [k for k in leaves if len(k) > n and fnmatch.fnmatch(".".join(k[:n]), pattern)]
            if matches:
                break
        out[".".join(found)] = sorted(matches)
    return out
