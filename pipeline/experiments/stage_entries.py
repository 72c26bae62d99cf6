"""The first draft of a new stage's wiring, written by the generator (``python -m pipeline.experiments.stage_deps``)
so that a stage is its module, its row in the stage table and its outputs in paths.yaml; settings of its own
add their section model and its line in ``Params``.

- **Its dvc.yaml entry**, for a row of ``pipeline.stage_table.STAGES`` that dvc.yaml lacks: ``cmd``; deps: the
  params stamp and every paths.yaml entry of another stage that its module reads (``PATHS.split.dir``); params:
  what its module reads (its own section whole, single keys of the others); outs: every entry of its
  paths.yaml group but a folder around another (a model's ``model_dir`` around ``final/``), files under
  ``reports/``, ``plots/`` and ``metrics/`` in git (``cache: false``, ``persist: true``), the rest in DVC's
  cache. The code deps and headline outs follow from ``stage_deps``' usual pass.
  After that the entry is a person's: the generator never rewrites an entry's data deps, params or outs.
- **Its params.yaml section**, for a ``Params`` field that params.yaml lacks: the section model's defaults,
  appended at the end of the file (the rest of the file is left byte for byte).

A stage the reads cannot describe (a variant stage, one handed a section by name) is refused with what to write
by hand, rather than drafted wrong.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from pipeline.experiments.static_reads import param_reads, path_reads

GIT_TRACKED = ("reports", "plots", "metrics")  # top folders of small files a person reads and diffs: in git
STAMP = "${paths.check_params.stamp}"
SEED_RUNS = "seeds_dir"  # the paths.yaml key of a training stage's other seeds (pipeline.common.seed_runs)


class DraftError(ValueError):
    """A new stage's entry or section cannot be drafted; the message says what to write by hand."""


def _leaves(repo: Path) -> dict[tuple[str, ...], Path]:
    """paths.yaml's entries by key (``("split", "dir")``), read through the layout's own reader."""
    from pipeline.common.layout import load_layout

    return {tuple(k.split(".")[1:]): v for k, v in load_layout(repo / "paths.yaml").leaves().items()}


def _plain_module(repo: Path, name: str) -> Path:
    from pipeline.stage_table import STAGES

    stage = STAGES[name]
    if stage.variants is not None or stage.args:
        raise DraftError(f"stage {name}: a stage with variants or args reads its paths and params through a "
                         "variable; write its dvc.yaml entry by hand (docs/stages.md, Adding a stage)")
    module = repo / Path(*stage.work_module.split(".")).with_suffix(".py")
    if not module.is_file():
        raise DraftError(f"stage {name}: its module {module.relative_to(repo)} does not exist")
    return module


def named_reads(repo: Path, name: str, leaves: dict[tuple[str, ...], Path]) -> tuple[list[str], list[str]]:
    """What stage ``name``'s module names: the paths.yaml entries of other stages (``${paths.split.dir}``, its
    data deps) and the params (its own section whole, single keys of the others; another section whole only
    when handed on whole: ``p = params.quail`` then ``p.seed`` reads one key)."""
    module = _plain_module(repo, name)
    deps: list[str] = []
    for read, keys in sorted(path_reads(module, leaves).items()):
        if not keys:
            raise DraftError(f"{module.relative_to(repo)}: PATHS.{read} is not in paths.yaml")
        deps += [ref for ref in ("${paths." + ".".join(k) + "}" for k in keys if k[0] != name) if ref not in deps]
    reads = param_reads(module)
    keyed = {read.split(".")[0] for read in reads if "." in read}
    sections = sorted({r.split(".")[0] for r in reads if r.split(".")[0] == name or ("." not in r and r not in keyed)})
    return deps, sections + sorted(r for r in reads if "." in r and r.split(".")[0] not in sections)


def draft_entry(repo: Path, name: str) -> dict[str, Any]:
    """dvc.yaml's entry for the stage-table row ``name`` (plain values; the caller adds code deps)."""
    leaves = _leaves(repo)
    own = {key: value for key, value in leaves.items() if key[0] == name and len(key) > 1}
    if not own:
        raise DraftError(f"stage {name}: paths.yaml has no `{name}:` group; write its outputs there first")
    deps, params = named_reads(repo, name, leaves)
    deps = ([STAMP] if name != "check_params" else ["params.yaml"]) + deps
    outs: list[Any] = []
    for key, value in own.items():
        if any(value in other.parents for other in own.values()):
            continue  # the folder around another out (a model's model_dir around its final/): not an out itself
        ref = "${paths." + ".".join(key) + "}"
        if value.parts[0] in GIT_TRACKED:
            outs.append({ref: {"cache": False, "persist": True}})
        elif key[-1] == SEED_RUNS:
            # every seed's run after the first, checkpoints and all: DVC deletes a stage's outs before it reruns
            # it, so they are kept (persist) and a killed stage resumes them
            outs.append({ref: {"persist": True}})
        else:
            outs.append(ref)
    entry: dict[str, Any] = {"cmd": f"python -m flows.stage {name}", "deps": deps}
    if params:
        entry["params"] = params
    entry["outs"] = outs
    return entry


def _resolved(leaves: dict[tuple[str, ...], Path], ref: str) -> Path | None:
    """``${paths.a.b}`` (or ``${paths.a.b}/file``) as the path it names; None for anything else."""
    if not ref.startswith("${paths."):
        return None
    key, _, rest = ref[len("${paths."):].partition("}")
    path = leaves.get(tuple(key.split(".")))
    return path / rest.lstrip("/") if path is not None else None


def lacking(repo: Path, name: str, deps: list, params: list, outs: list) -> tuple[list[str], list[str]]:
    """The data deps and params stage ``name``'s module names that its committed entry (``deps``, ``params``)
    lacks: a registry that grows (a new QuAIL variant, read by ``PATHS.quail_mc[v].predictions``) reaches the
    stages that loop over it. A dep inside a declared folder (or one of its own ``outs``), or a key inside a
    declared section, is there."""
    leaves = _leaves(repo)
    want_deps, want_params = named_reads(repo, name, leaves)
    have = {_resolved(leaves, d if isinstance(d, str) else next(iter(d))) for d in [*deps, *outs]} - {None}
    # a read is declared when it is a declared path, lies inside one, or holds one (a model's checkpoint folder
    # around its declared final/), as tests/test_layout.py accepts
    missing_deps = [d for d in want_deps if d not in deps and not any(
        p == h or h in p.parents or p in h.parents for p in [_resolved(leaves, d)] for h in have)]
    declared: set[str] = set()
    for entry in params:  # "section", "section.key", or {file: [keys]} (only params.yaml's keys are these)
        declared.update(entry.get("params.yaml", []) if isinstance(entry, dict) else [entry])
    missing_params = [r for r in want_params if r not in declared and r.split(".")[0] not in declared
                      and not (r == r.split(".")[0] and any(d.startswith(r + ".") for d in declared))]
    return missing_deps, missing_params


def missing_sections(repo: Path) -> dict[str, dict[str, Any]]:
    """Each ``Params`` section params.yaml lacks -> its defaults (a field without one is refused by name)."""
    from pydantic_core import PydanticUndefined

    from pipeline.params import Params

    have = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8")) or {}
    out: dict[str, dict[str, Any]] = {}
    for section, field in Params.model_fields.items():
        if section in have:
            continue
        model = field.annotation
        values: dict[str, Any] = {}
        for key, sub in model.model_fields.items():
            if sub.default_factory is not None:
                value = sub.default_factory()
            elif sub.default is not PydanticUndefined:
                value = sub.default
            else:
                raise DraftError(f"params.yaml has no `{section}:` section and {model.__name__}.{key} has no "
                                 "default: give every field a default, or write the section by hand")
            values[key] = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        out[section] = values
    return out


def append_sections(repo: Path, sections: dict[str, dict[str, Any]]) -> None:
    """Append the drafted sections to params.yaml, leaving the file's text above them as it was."""
    path = repo / "params.yaml"
    text = path.read_text(encoding="utf-8")
    block = "".join("\n" + yaml.safe_dump({section: values}, sort_keys=False, default_flow_style=False)
                    for section, values in sections.items())
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(text.rstrip("\n") + "\n" + block, encoding="utf-8")
    tmp.replace(path)
