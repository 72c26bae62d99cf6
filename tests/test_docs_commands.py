"""Every command the README and docs show points at something that exists: a make target in the Makefile,
a module ``python -m`` can run, a stage ``dvc repro``/``dvc exp run`` can take, a file or folder of the
repository a link or a path names (or an output dvc.yaml declares). A doc that names a renamed module or a
target make rejects fails here, not in a new user's first hour."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MAKE_TARGET = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", re.M)
PYTHON_MODULE = re.compile(r"\bpython3? -m ([A-Za-z_][\w.]*)")
MAKE_CALL = re.compile(r"(?<![\w/-])make (?:-s )?([a-z][\w-]*)")
DVC_STAGE = re.compile(r"\bdvc (?:repro|exp run)\b([^\n;|&#`(),]*)")
VALUED = {"-S", "--set-param", "-n", "--name", "-r", "--remote", "-j", "--jobs"}  # options that take a value
CODE = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
MD_LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
# the tools' own modules and the ones other packages ship (pytest, prefect, torch.distributed...)
NOT_OURS = ("pytest", "prefect", "torch", "pip", "venv", "uv", "dvc", "http", "json", "accelerate", "pywb")


def _docs() -> dict[Path, str]:
    """Each doc's code: fenced blocks and inline code spans (prose says "make it", not a target)."""
    return {path: "\n".join(a or b for a, b in CODE.findall(path.read_text(encoding="utf-8"))) for path in DOCS}


def _stages() -> set[str]:
    spec = yaml.safe_load((REPO / "dvc.yaml").read_text(encoding="utf-8"))["stages"]
    names = set(spec)
    for name, stage in spec.items():
        for value in stage.get("foreach") or []:
            names.add(f"{name}@{value}")
    return names


def test_every_make_target_a_doc_names_is_in_the_makefile():
    targets = set(MAKE_TARGET.findall((REPO / "Makefile").read_text(encoding="utf-8")))
    missing = sorted({(path.name, t) for path, text in _docs().items() for t in MAKE_CALL.findall(text)
                      if t not in targets})
    assert not missing, f"make targets the docs name and the Makefile lacks: {missing}"


def test_every_python_module_a_doc_runs_exists():
    missing = []
    for path, text in _docs().items():
        for module in PYTHON_MODULE.findall(text):
            module = module.rstrip(".")
            if module.split(".")[0] in NOT_OURS:
                continue
            if importlib.util.find_spec(module) is None:
                missing.append((path.name, module))
    assert not missing, f"modules the docs run that do not exist: {sorted(set(missing))}"


def test_every_stage_a_doc_reproduces_is_in_dvc_yaml():
    stages = _stages()
    wrong = []
    for path, text in _docs().items():
        for args in DVC_STAGE.findall(text):
            tokens, names = args.split(), []
            while tokens:
                token = tokens.pop(0)
                if token in VALUED and tokens:
                    tokens.pop(0)
                elif not token.startswith("-"):
                    names.append(token)
            for name in names:
                if name in stages or name.startswith(("<", "$", "[")) or "=" in name or "..." in name:
                    continue
                if "@" not in name and any(s.startswith(f"{name}@") for s in stages):
                    continue  # a foreach stage's every variant
                wrong.append((path.name, name))
    assert not wrong, f"stages the docs reproduce that dvc.yaml does not have: {sorted(set(wrong))}"


def test_every_link_to_a_repository_file_resolves():
    broken = []
    for path in DOCS:
        for target in MD_LINK.findall(path.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            if not (path.parent / target).exists():
                broken.append((path.name, target))
    assert not broken, f"links to files that are not there: {sorted(set(broken))}"


def test_the_checks_find_what_a_renamed_command_leaves_behind(tmp_path, monkeypatch):
    import pytest

    doc = tmp_path / "doc.md"
    doc.write_text("Run `make nosuch`, then:\n\n```bash\npython -m pipeline.span_qa.metrics --help\n"
                   "dvc repro -f nosuch_stage   # and\ndvc exp run -S quail.seed=1 quail_baselines\n```\n"
                   "See [the guide](missing.md). But `make test` exists.\n")
    monkeypatch.setitem(globals(), "DOCS", [doc])
    for check, named in ((test_every_make_target_a_doc_names_is_in_the_makefile, "nosuch"),
                         (test_every_python_module_a_doc_runs_exists, "pipeline.span_qa.metrics"),
                         (test_every_stage_a_doc_reproduces_is_in_dvc_yaml, "nosuch_stage"),
                         (test_every_link_to_a_repository_file_resolves, "missing.md")):
        with pytest.raises(AssertionError, match=named) as failed:
            check()
        assert "quail_baselines" not in str(failed.value) and "'test'" not in str(failed.value)
