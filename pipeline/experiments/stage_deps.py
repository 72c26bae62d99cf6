"""Each stage's code deps in dvc.yaml: exactly the project files its entry point can execute.

``python -m pipeline.experiments.stage_deps`` rewrites the ``flows/`` and ``pipeline/`` entries of every
stage's ``deps`` from an import walk of ``python -m flows.<stage>`` (comments, data deps and order of the rest
kept); ``--check`` only says whether dvc.yaml is up to date (exit 1 if not, naming the stages). Why file level:
a folder dep couples tracks that share a folder (an edit to a QuAIL heuristic re-parsed Wikipedia), so an edit
reruns exactly the stages that can run the edited file.

The walk parses (never imports) each module and follows every import, top level or inside a function,
absolute or relative, with the ``__init__.py`` of every package on the way; a module named in a string
(``"pipeline.crawl.middleware.BackoffRetryMiddleware"`` in Scrapy's settings) or a script beside a module run
by its file name (``spider.py``, run by ``scrapy runspider``) counts as imported. A data file beside a module
(``porter2_overrides.json``) is a dep of the stages that reach a module naming it.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

PROJECT_PACKAGES = ("flows", "pipeline")
_DOTTED = re.compile(r"(?:flows|pipeline)(?:\.[A-Za-z_]\w*)+")
ROOT = Path(__file__).resolve().parents[2]


def module_file(repo: Path, module: str) -> Path | None:
    base = repo / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_modules(source: str, path: Path, module: str) -> set[str]:
    tree = ast.parse(source, filename=str(path))
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            found.add(node.value)  # loaded by name: a Scrapy middleware "pipeline.crawl.middleware.Backoff..."
    return {m for m in found if m.split(".")[0] in PROJECT_PACKAGES}


def project_files(repo: Path, module: str) -> set[Path]:
    """Files (relative to ``repo``) of ``module`` and of every project module it reaches, with the packages'
    ``__init__.py`` files that importing them runs, and the data files beside them that they name."""
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
        source = path.read_text(encoding="utf-8")
        files.add(path.relative_to(repo))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for sibling in path.parent.iterdir():
            if not sibling.is_file() or sibling == path or sibling.name not in source:
                continue
            if sibling.suffix == ".py":  # run as a script by name (scrapy runspider .../spider.py)
                todo.append(f"{package}.{sibling.stem}")
            elif sibling.suffix != ".pyc":
                files.add(sibling.relative_to(repo))
        todo.extend(_imported_modules(source, path, name))
    return files


def stage_module(cmd: str) -> str:
    """``python -m flows.x [ARG]`` -> ``flows.x``."""
    words = cmd.split()
    if words[:2] != ["python", "-m"] or len(words) < 3:
        raise ValueError(f"a stage command must be `python -m flows.<stage>`, got {cmd!r}")
    return words[2]


def _is_code(dep: str) -> bool:
    return dep.split("/", 1)[0] in PROJECT_PACKAGES


def code_deps(repo: Path, cmd: str) -> list[str]:
    return sorted(str(p) for p in project_files(repo, stage_module(cmd)))


def update(repo: Path = ROOT, write: bool = True) -> list[str]:
    """Stages whose code deps differ from the walk (rewritten when ``write``)."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    path = repo / "dvc.yaml"
    doc = yaml.load(path.read_text(encoding="utf-8"))
    stale = []
    for name, stage in doc["stages"].items():
        body = stage["do"] if "foreach" in stage else stage
        deps = body["deps"]
        want = code_deps(repo, body["cmd"])
        have = [d for d in deps if isinstance(d, str) and _is_code(d)]
        if have == want:
            continue
        stale.append(name)
        others = [d for d in deps if not (isinstance(d, str) and _is_code(d))]
        deps.clear()
        deps.extend(want + others)
    if stale and write:
        with path.open("w", encoding="utf-8") as fh:
            yaml.dump(doc, fh)
    return stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.stage_deps", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 if dvc.yaml's code deps differ from the walk")
    args = ap.parse_args(argv)
    stale = update(write=not args.check)
    if args.check and stale:
        print(f"dvc.yaml: code deps out of date for {', '.join(stale)}; run python -m pipeline.experiments.stage_deps",
              file=sys.stderr)
        return 1
    print(f"dvc.yaml: {'rewrote' if stale else 'up to date:'} {', '.join(stale) or 'every stage'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
