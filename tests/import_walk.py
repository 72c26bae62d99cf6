"""The project files a module imports, followed through every import (top-level or inside a function).

What a DVC stage must declare as code deps: everything ``python -m flows.<stage>`` can execute from this
repository. Parsed, not imported, so an import inside a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

PROJECT_PACKAGES = ("flows", "pipeline")


def module_file(repo: Path, module: str) -> Path | None:
    base = repo / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(path: Path, module: str) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return {m for m in found if m.split(".")[0] in PROJECT_PACKAGES}


def project_files(repo: Path, module: str) -> set[Path]:
    """Files (relative to ``repo``) of ``module`` and of every project module it reaches, with the packages'
    ``__init__.py`` files that importing them runs."""
    seen: set[str] = set()
    files: set[Path] = set()
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        parts = name.split(".")
        for i in range(1, len(parts)):  # importing a.b.c runs a/__init__.py and a/b/__init__.py
            todo.append(".".join(parts[:i]))
        path = module_file(repo, name)
        if path is None:
            continue
        files.add(path.relative_to(repo))
        todo.extend(_imported_modules(path, name))
    return files
