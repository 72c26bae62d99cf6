"""Each stage's code deps in dvc.yaml: exactly the project files that can change its outputs' bytes; its
headline outs (``metrics/<track>/<system>.json``), from the registry its work module keeps (``headlines``); and
the whole entry (data deps, params, outs) of a stage whose module lists it (``entry``: ``model_cards``, a
card per model).

``python -m pipeline.experiments.stage_deps`` rewrites the ``flows/`` and ``pipeline/`` entries of every
stage's ``deps`` from an import walk of the stage's work (``pipeline.stage_table.STAGES``: ``pipeline.stages.<module>``),
after its data deps (comments and order of those kept); ``--check`` only says whether dvc.yaml is up to date
(exit 1 if not, naming the stages). Why file level: a folder dep couples tracks that share a folder (an edit to
a QuAIL heuristic re-parsed Wikipedia), so an edit reruns exactly the stages that can run the edited file.

The walk parses (never imports) each module and follows every import, top level or inside a function,
absolute or relative, with the ``__init__.py`` of every package on the way (except one that runs nothing: a
package reached only as the parent of a module it holds, whose ``__init__.py`` is a docstring and constant
assignments, cannot change what that module computes; a module that names the package itself, ``from pipeline
import __version__``, makes it a dep again, and so does any statement added to it); a module named in a string
(``"pipeline.crawl.middleware.BackoffRetryMiddleware"`` in Scrapy's settings) or a script beside a module run
by its file name (``spider.py``, run by ``scrapy runspider``) counts as imported. A data file beside a module
(``porter2_overrides.json``) is a dep of the stages that reach a module naming it. Imports under
``if TYPE_CHECKING:`` never run and are not followed.

It does not enter :data:`BOUNDARY`: the Prefect wrapper (``flows/``, which starts the walk's work and writes
nothing), params validation (which checks values and never changes one; DVC tracks the values themselves),
the trust marks on the params fields (metadata a run's check reads; a field's value is the same with or without
them) and logging. Each is held to that by a test (tests/test_dvc_graph.py).
"""

from __future__ import annotations

import argparse
import ast
import io
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pipeline.experiments.stage_entries import DraftError, append_sections, draft_entry, lacking, missing_sections

PROJECT_PACKAGES = ("flows", "pipeline")
BOUNDARY = {
    "flows": "the Prefect wrapper: names, tags and leases a run, writes no artifact",
    "pipeline.params": "params validation: accepts or refuses values, never changes one",
    "pipeline.common.logs": "log lines and progress: opens no file",
    "pipeline.common.trust": "the Science/Infrastructure marks on params fields: type metadata, no value",
}
# a module named in a string, with an attribute after a colon or not ("pipeline.quail.systems:MC_VARIANTS")
_DOTTED = re.compile(r"((?:flows|pipeline)(?:\.[A-Za-z_]\w*)+)(?::[A-Za-z_]\w*)?")
ROOT = Path(__file__).resolve().parents[2]


def module_file(repo: Path, module: str) -> Path | None:
    base = repo / Path(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def in_boundary(module: str) -> bool:
    return any(module == b or module.startswith(b + ".") for b in BOUNDARY)


def _type_checking_only(tree: ast.AST) -> set[int]:
    """ids of the nodes under ``if TYPE_CHECKING:`` (never executed)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and (
                (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
                or (isinstance(node.test, ast.Attribute) and node.test.attr == "TYPE_CHECKING")):
            for child in node.body:
                skipped.update(id(n) for n in ast.walk(child))
    return skipped


def _parse(source: str, path: Path) -> ast.Module:
    try:
        return ast.parse(source, filename=str(path))
    except (SyntaxError, RecursionError, MemoryError) as exc:  # 200,000 nested parentheses: the parser's limit
        raise ValueError(f"{path}: Python cannot parse it ({type(exc).__name__}: {str(exc)[:120]})") from None


def runs_nothing(tree: ast.Module) -> bool:
    """True for a module body of a docstring and assignments of literal constants (``__version__ = "0.1.0"``):
    running it binds names in its own namespace and nothing else, so a package ``__init__.py`` like that changes
    no output of a module under it unless a module reads those names (and then names the package: a dep)."""
    def constant(node: ast.stmt) -> bool:
        if isinstance(node, ast.Expr):
            return isinstance(node.value, ast.Constant)
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            return isinstance(node.value, ast.Constant) and all(isinstance(t, ast.Name) for t in targets)
        return False
    return all(constant(node) for node in tree.body)


def _imported_modules(source: str, path: Path, module: str, repo: Path | None = None) -> set[str]:
    """The project modules ``module`` imports. With ``repo``, ``from pkg import mod`` names ``pkg.mod`` only
    when ``mod`` is a module file (``pkg`` then runs as its parent), ``pkg`` itself when it is an attribute."""
    tree = _parse(source, path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    skipped = _type_checking_only(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1])
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            submodules = {f"{target}.{alias.name}" for alias in node.names
                          if repo is not None and module_file(repo, f"{target}.{alias.name}") is not None}
            found.update(submodules)  # `from pkg import module`
            if repo is None or len(submodules) < len(node.names):  # `from pkg import name`: reads pkg itself
                found.add(target)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            # loaded by name: a Scrapy middleware "pipeline.crawl.middleware.Backoff...", a stage table's
            # "pipeline.stages.evaluate_quail_mc:card"
            found.add(_DOTTED.fullmatch(node.value).group(1))
    return {m for m in found if m.split(".")[0] in PROJECT_PACKAGES and not in_boundary(m)}


def project_files(repo: Path, module: str) -> set[Path]:
    """Files (relative to ``repo``) of ``module`` and of every project module it reaches, with the packages'
    ``__init__.py`` files that importing them runs, and the data files beside them that they name."""
    seen: set[str] = set()
    named: set[str] = {module}  # modules some module imports by name (not only run as a parent package)
    quiet: set[Path] = set()  # package __init__ files that run nothing (runs_nothing)
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
        try:
            source = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start}); a module must be UTF-8 text") from None
        if path.name == "__init__.py" and runs_nothing(_parse(source, path)):
            quiet.add(path.relative_to(repo))
        files.add(path.relative_to(repo))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for sibling in path.parent.iterdir():
            # named in the source as a file name of its own ("porter2_overrides.json", "spider.py"): a name with
            # an extension, not a substring of other words (a file called "a" or "import" is in every module)
            if (not sibling.is_file() or sibling == path or "." not in sibling.name.strip(".")
                    or not re.search(rf"(?<![\w.-]){re.escape(sibling.name)}(?![\w-])", source)):
                continue
            if sibling.suffix == ".py":  # run as a script by name (scrapy runspider .../spider.py)
                todo.append(f"{package}.{sibling.stem}")
            elif sibling.suffix != ".pyc":
                files.add(sibling.relative_to(repo))
        imported = _imported_modules(source, path, name, repo)
        named.update(imported)
        todo.extend(imported)
    named_files = {p.relative_to(repo) for m in named if (p := module_file(repo, m)) is not None}
    return {f for f in files if f not in quiet or f in named_files}


def stage_module(cmd: str) -> str:
    """``python -m flows.stage NAME [VARIANT]`` -> the module of NAME's work (``pipeline.stages.<module>``)."""
    from pipeline.stage_table import STAGES

    words = cmd.split()
    if words[:3] != ["python", "-m", "flows.stage"] or len(words) < 4 or words[3] not in STAGES:
        raise ValueError(f"a stage command must be `python -m flows.stage <stage> [VARIANT]` with a stage of "
                         f"pipeline.stage_table.STAGES, got {cmd!r}")
    return STAGES[words[3]].work_module


def _is_code(dep: str) -> bool:
    return dep.split("/", 1)[0] in PROJECT_PACKAGES


def code_deps(repo: Path, cmd: str) -> list[str]:
    return sorted(str(p) for p in project_files(repo, stage_module(cmd)))


METRICS_OUT = "${paths.metrics}/"


def headline_outs(cmd: str, foreach: bool) -> list[str] | None:
    """The headline files a stage writes, as dvc.yaml names them (``${paths.metrics}/quail/pmi.json``), from its
    work module's registry ``headlines(*args)`` (its fixed arguments, and ``${key}`` for a foreach stage's
    variant); None for a stage that writes none."""
    import importlib

    from pipeline.stage_table import STAGES

    stage = STAGES[cmd.split()[3]]
    registry = getattr(importlib.import_module(stage.work_module), "headlines", None)
    if registry is None:
        return None
    rows = registry(*stage.args, *(["${key}"] if foreach else []))
    return [f"{METRICS_OUT}{track}/{system}.json" for track, system in rows]


def listed_entry(cmd: str) -> dict[str, list[str]] | None:
    """The data deps, params and outs of a stage whose work module lists them (``entry()``: model_cards, which
    finds its models in the stage table, one card each, kept in git), as dvc.yaml names them; None for a stage
    whose entry a person writes."""
    import importlib

    from pipeline.stage_table import STAGES

    stage = STAGES[cmd.split()[3]]
    registry = getattr(importlib.import_module(stage.work_module), "entry", None)
    return None if registry is None else registry()


def _out_path(out: object) -> str:
    return next(iter(out)) if isinstance(out, dict) else str(out)


def _rewrite_outs(outs: list, want: list[str], owned: Callable[[str], bool] = lambda path: path.startswith(METRICS_OUT)
                  ) -> bool:
    """Put ``want`` (cache: false, persist: true) where the stage's ``owned`` outs are (its headline outs by
    default); True if they changed."""
    from ruamel.yaml.comments import CommentedMap

    have = [_out_path(o) for o in outs if owned(_out_path(o))]
    if have == want:
        return False
    at = next((i for i, o in enumerate(outs) if owned(_out_path(o))), len(outs))
    kept = [o for o in outs if not owned(_out_path(o))]
    entries = [CommentedMap({path: CommentedMap({"cache": False, "persist": True})}) for path in want]
    outs.clear()
    outs.extend(kept[:at] + entries + kept[at:])
    return True


def _commented(value: object) -> object:
    """Plain dicts and lists as ruamel's round-trip types, so the drafted entry dumps in dvc.yaml's style."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(value, dict):
        return CommentedMap({k: _commented(v) for k, v in value.items()})
    if isinstance(value, list):
        return CommentedSeq([_commented(v) for v in value])
    return value


def _grown(repo: Path, name: str, stage: Any, others: list) -> list[str]:
    """Add to a plain stage's entry the data deps and params its module names and the entry lacks (appended to
    ``others``, its data deps, and to its params); what was added. A foreach or args stage reads through a
    variable and is left as written."""
    from pipeline.stage_table import STAGES

    word = stage.get("cmd", "").split()[3:4] if "foreach" not in stage else []
    if not word or STAGES[word[0]].variants is not None or STAGES[word[0]].args or name != word[0]:
        return []
    deps, params = lacking(repo, name, others, list(stage.get("params", [])), list(stage.get("outs", [])))
    others.extend(deps)
    if params:
        stage.setdefault("params", []).extend(params)
    return deps + params


def update(repo: Path = ROOT, write: bool = True) -> list[str]:
    """Stages whose code deps or headline outs differ from the walk and the registries, stage-table rows dvc.yaml
    lacks (drafted: :mod:`pipeline.experiments.stage_entries`) and ``Params`` sections params.yaml lacks (their
    defaults); all written when ``write``."""
    from ruamel.yaml import YAML

    from pipeline.stage_table import STAGES

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    sections = missing_sections(repo)
    if sections and write:
        append_sections(repo, sections)
    path = repo / "dvc.yaml"
    doc = yaml.load(path.read_text(encoding="utf-8"))
    stale = [f"params.yaml: {section}" for section in sections]
    drafted = [name for name in STAGES if name not in doc["stages"]]
    for name in drafted:
        doc["stages"][name] = _commented(draft_entry(repo, name))
    stale += [f"dvc.yaml: {name} (drafted)" for name in drafted]
    for name, stage in doc["stages"].items():
        body = stage["do"] if "foreach" in stage else stage
        deps = body["deps"]
        want = code_deps(repo, body["cmd"])
        others = [d for d in deps if not (isinstance(d, str) and _is_code(d))]
        listed = listed_entry(body["cmd"])
        grown = _grown(repo, name, stage, others) if listed is None else []
        if grown:
            stale.append(f"dvc.yaml: {name} (+ {', '.join(grown)})")
        headlines = headline_outs(body["cmd"], "foreach" in stage)
        changed = headlines is not None and _rewrite_outs(body.setdefault("outs", []), headlines)
        if listed is not None:  # the module lists its whole entry: data deps, params and outs are its
            changed = _rewrite_outs(body.setdefault("outs", []), listed["outs"], lambda path: True) or changed
            others = list(listed["deps"])
            if list(body.get("params", [])) != listed["params"]:
                changed = True
                body["params"] = listed["params"]
        if list(deps) != others + want:
            changed = True
            deps.clear()
            deps.extend(others + want)  # what a person reads first: the data a stage stands on
        if changed and name not in drafted and not grown:
            stale.append(f"dvc.yaml: {name}")
    if stale and write:
        out = io.StringIO()
        yaml.dump(doc, out)
        text = out.getvalue()
        if "\n\nmetrics:" not in text:  # the blank line after the last stage, lost when its outs are rewritten
            text = text.replace("\nmetrics:", "\n\nmetrics:", 1)
        path.write_text(text, encoding="utf-8")
    return stale


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipeline.experiments.stage_deps", description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true",
                    help="exit 1 if dvc.yaml's code deps differ from the walk, or a stage or a section is missing")
    args = ap.parse_args(argv)
    try:
        stale = update(write=not args.check)
    except (DraftError, ValueError) as exc:  # a stage module that cannot be read or parsed: named, no traceback
        print(f"stage_deps: {exc}", file=sys.stderr)
        return 2
    if args.check and stale:
        print(f"out of date: {'; '.join(stale)}; run python -m pipeline.experiments.stage_deps", file=sys.stderr)
        return 1
    print(f"wrote {'; '.join(stale)}" if stale else "dvc.yaml and params.yaml: up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
