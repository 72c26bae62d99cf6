"""Outputs written whole through a temporary file keep the mode a plain open() gives under the umask:
a group that shares a DVC cache and a workspace (umask 002) must be able to read and update them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from pipeline.common.files import atomic_output, current_umask, write_json_set


@pytest.mark.parametrize("mask", [0o002, 0o022, 0o077])
def test_atomic_outputs_take_the_umask_not_0600(tmp_path, mask):
    code = (
        "import sys; from pathlib import Path; "
        "from pipeline.common.files import atomic_output, write_json_set; "
        "out = Path(sys.argv[1]); "
        "f = atomic_output(out / 'a.txt'); fh = f.__enter__(); fh.write('x'); f.__exit__(None, None, None); "
        "write_json_set([(out / 'b.json', {'k': 1}, None)]); "
        "open(out / 'plain.txt', 'w').close()"
    )
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    subprocess.run(["sh", "-c", f"umask {mask:03o} && exec \"$0\" -c \"$1\" \"$2\"", sys.executable, code,
                    str(tmp_path)], check=True, env=env)
    plain = stat.S_IMODE((tmp_path / "plain.txt").stat().st_mode)
    assert plain == 0o666 & ~mask
    for name in ("a.txt", "b.json"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == plain, name


def test_umask_is_read_without_being_changed(tmp_path):
    before = os.umask(0o027)
    try:
        assert current_umask() == 0o027
        assert current_umask() == 0o027
        with atomic_output(tmp_path / "x.json") as fh:
            json.dump({}, fh)
        write_json_set([(tmp_path / "y.json", {}, None)])
        assert stat.S_IMODE((tmp_path / "x.json").stat().st_mode) == 0o640
        assert stat.S_IMODE((tmp_path / "y.json").stat().st_mode) == 0o640
    finally:
        os.umask(before)


def test_an_evaluate_stage_stopped_while_writing_keeps_its_old_report_and_headline(tmp_path, monkeypatch):
    """The report and the headline row are one set: a stop while writing the second leaves both old files
    as they were and no temporary file behind (they were one file after the other)."""
    from pipeline.common import files, headline
    from pipeline.common.scoring import write_scores

    monkeypatch.setattr(headline, "headline_path", lambda track, system: tmp_path / f"{system}.json")
    report = tmp_path / "report.json"
    write_scores(report, {"accuracy": 1.0}, "quail", "old", {"acc": 1.0}, {})
    before = (report.read_text(), (tmp_path / "old.json").read_text())
    real, calls = files.json.dump, []

    def dump(obj, fh, **kw):
        calls.append(obj)
        if len(calls) == 2:
            raise KeyboardInterrupt  # the stop arrives while the headline is written
        real(obj, fh, **kw)

    monkeypatch.setattr(files.json, "dump", dump)
    with pytest.raises(KeyboardInterrupt):
        write_scores(report, {"accuracy": 2.0}, "quail", "old", {"acc": 2.0}, {})
    assert (report.read_text(), (tmp_path / "old.json").read_text()) == before
    assert not list(tmp_path.glob(".*.part"))
