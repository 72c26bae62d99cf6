"""Every module the README and docs tell a user to run with ``python -m`` answers ``--help`` (exit 0, a usage
line), run in-process through its ``main`` (each as a subprocess would cost a Python start and its imports)."""

from __future__ import annotations

import contextlib
import importlib
import io
import re

import pytest

from tests.conftest import REPO

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
MODULES = sorted({m for doc in DOCS for m in re.findall(r"python3? -m ((?:pipeline|benchmarks|flows)\.[a-z0-9_.]+)",
                                                        doc.read_text(encoding="utf-8"))})


def test_the_docs_name_modules():
    assert "pipeline.experiments.extract_page" in MODULES and len(MODULES) > 10


@pytest.mark.parametrize("module", MODULES)
def test_every_module_the_docs_name_answers_help(module):
    mod = importlib.import_module(module)
    assert hasattr(mod, "main"), f"{module} has no main(); the docs tell users to run it"
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()), \
            pytest.raises(SystemExit) as stop:
        result = mod.main(["--help"])
        raise SystemExit(result)
    assert stop.value.code in (0, None), (module, out.getvalue()[-500:])
    assert out.getvalue().strip(), f"{module} --help printed nothing"


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped (backticks included), spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def test_every_relative_link_in_the_docs_resolves_to_a_file_and_a_heading():
    broken = []
    for doc in DOCS:
        for target in re.findall(r"\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (doc.parent / path).resolve() if path else doc
            if not file.exists():
                broken.append(f"{doc.name}: {target} (no such file)")
                continue
            if anchor and file.suffix == ".md":
                headings = {_slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(encoding="utf-8"), re.M)}
                if anchor not in headings:
                    broken.append(f"{doc.name}: {target} (no such heading)")
    assert not broken, broken
