"""`make setup` installs the project into its venv (editable): `import pipeline` works from any folder."""

from __future__ import annotations

import pytest

import subprocess
from pathlib import Path

from tests.conftest import venv_bin

pytestmark = pytest.mark.slow  # runs make setup


def test_the_package_imports_from_another_folder(repo, tmp_path):
    res = subprocess.run([venv_bin("python"), "-c", "import flows, pipeline; print(pipeline.__file__); print(flows.__file__)"],
                         cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert res.returncode == 0, res.stderr[-2000:]
    files = [Path(line) for line in res.stdout.split()]
    assert files == [repo / "pipeline" / "__init__.py", repo / "flows" / "__init__.py"]
