"""A new QuAIL baseline is four files, made in a throw-away copy as docs/stages.md says: its function in
``pipeline/quail/baselines.py``, its name in ``pipeline/quail/systems.py``, a test and a sentence of docs; then
the generator (``python -m pipeline.experiments.stage_deps``) adds its headline row to dvc.yaml. The copy's
``quail_baselines`` then scores it on dev and the challenge set and writes its headline row, and the wiring
checks ``make test`` runs pass there: compare, the per-question file and ``make results`` read the names from
the declaration, so nothing else names it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.test_new_stage_edits import GIT, _copy, _edit, _python

pytestmark = pytest.mark.slow  # the stage and four test files in a copy

FUNCTION = '''

def baseline_shortest(questions: list[MCQuestion], x: BaselineInputs) -> dict[str, int]:
    """The shortest option (an example baseline: tests/test_new_baseline_edits.py)."""
    return {q.qid: min(range(len(q.options)), key=lambda i: (len(q.options[i]), i)) for q in questions}
'''

TEST = '''from pipeline.quail.baselines import baselines


def test_shortest_is_declared():
    assert "shortest" in baselines()
'''


def test_a_new_quail_baseline_is_four_files_and_the_generator(repo, shared, tmp_path):
    copy = _copy(repo, tmp_path)
    (tmp_path / "shared").symlink_to(shared)  # ../shared, as the checkout sees it
    baselines = copy / "pipeline/quail/baselines.py"
    baselines.write_text(baselines.read_text() + FUNCTION)
    _edit(copy / "pipeline/quail/systems.py", '"ir", "options_features")', '"ir", "options_features", "shortest")')
    (copy / "tests/test_shortest.py").write_text(TEST)
    _edit(copy / "docs/stages.md", "\n## How long it takes", "\nShortest: the shortest option (an example).\n\n## How long it takes")
    edited = subprocess.run(["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True,
                            check=True).stdout.splitlines()
    assert len(edited) == 4, edited
    _python(copy, "-m", "pipeline.experiments.stage_deps")
    changed = subprocess.run(["git", "diff", "--name-only"], cwd=copy, capture_output=True, text=True,
                             check=True).stdout.split()
    assert set(changed) == {"pipeline/quail/baselines.py", "pipeline/quail/systems.py", "docs/stages.md",
                            "dvc.yaml"}, changed
    assert "${paths.metrics}/quail/shortest.json" in (copy / "dvc.yaml").read_text()
    _python(copy, "-c", "from pipeline.params import load_params; from pipeline.stages import quail_baselines; "
                        "quail_baselines.run(load_params())")
    predictions = json.loads((copy / "data/predictions/quail/baselines.json").read_text())
    assert {name: "shortest" in systems for name, systems in predictions.items()} == {"dev": True, "challenge": True}
    row = json.loads((copy / "metrics/quail/shortest.json").read_text())
    assert 0 <= row["acc"] <= 100 and 0 <= row["acc_challenge"] <= 100
    subprocess.run([*GIT, "add", "-A"], cwd=copy, check=True)
    subprocess.run([*GIT, "commit", "-qm", "a new QuAIL baseline"], cwd=copy, check=True)
    (copy / ".venv").symlink_to(repo / ".venv")
    out = _python(copy, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "not slow", "tests/test_shortest.py",
                  "tests/test_layout.py", "tests/test_dvc_graph.py")
    assert " passed" in out and "failed" not in out, out[-2000:]
