"""A value that passed validation reaches params.yaml unchanged through ``dvc exp run -S``: DVC's own override
parser (Hydra's grammar) reads back exactly what the sweep, the profile runner and the GPU import wrote."""

from __future__ import annotations

import pytest
import yaml

from pipeline.experiments.overrides import override

VALUES = ["héllo wörld", "a,b", 'q"uote', "back\\slash", "end\\", 'x\\"y', "日本", "", " lead", "[x]", "'s'",
          3, 1e-4, 0.85, True, None, ["a,b", "é", 2], [3, 7]]


@pytest.mark.parametrize("value", VALUES)
def test_an_override_reads_back_as_the_value(value, tmp_path):
    from dvc.utils.hydra import apply_overrides

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump({"section": {"key": "before"}}))
    apply_overrides(str(path), [override("section.key", value)])  # what `dvc exp run -S` calls
    assert yaml.safe_load(path.read_text())["section"]["key"] == value


def test_the_sweep_and_the_profile_write_overrides_this_way(repo):
    from pipeline.experiments.profile import exp_run_command

    cmd = exp_run_command({"split.group_key": "url,title", "sample.start": "2016-01-01"}, "x")
    assert 'split.group_key="url,title"' in cmd and 'sample.start="2016-01-01"' in cmd
