"""Run a kept set of params overrides (a *profile*, e.g. ``infra/training/gpu-profile.yaml``) as one DVC experiment.

A profile is a flat mapping of ``section.key`` to a value (a plain one, or a list of plain ones: ``seeds``). Every key must exist in ``params.yaml`` and every
value is validated with the params schema (as a sweep's grid is) before DVC starts, so a profile cannot name a
file (DVC's ``FILE:key`` form), a path or an interpolation (``${...}``), and a typo fails at once instead of
after the first stages. ``dvc exp run -S`` then applies it: the experiment is a normal DVC experiment that
``dvc exp show``, ``dvc metrics diff`` and ``dvc plots diff`` compare with the workspace.

    python -m pipeline.experiments.profile infra/training/gpu-profile.yaml [--name gpu-profile] [--dry]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from pipeline.experiments.overrides import override
from pipeline.experiments.sweep import SweepError, check_name, check_point
from pipeline.params import PROJECT_PARAMS_FILE


def load_profile(path: str | Path, params_file: Path = PROJECT_PARAMS_FILE) -> dict[str, Any]:
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not data:
        raise SweepError(f"{path}: expected a mapping of params keys (section.key) to values")
    for key, value in data.items():
        if isinstance(value, dict) or (isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value)):
            raise SweepError(f"{path}: {key}: a profile value is a plain number, string, boolean or null, or a "
                             f"list of them (a section's seeds), got {value!r}")
    return check_point(data, params_file)  # keys exist, no ${...}, values valid by the params schema


def exp_run_command(profile: dict[str, Any], name: str) -> list[str]:
    cmd = ["dvc", "exp", "run", "-n", name]
    for key, value in profile.items():
        cmd += ["-S", override(key, value)]
    return cmd


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("profile")
    ap.add_argument("--name", default=None, help="experiment name (default: the profile file's stem)")
    ap.add_argument("--dry", action="store_true", help="print the dvc command instead of running it")
    args = ap.parse_args(argv)
    try:
        profile = load_profile(args.profile)
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        name = check_name(args.name or Path(args.profile).stem)
    except SweepError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    cmd = exp_run_command(profile, name)
    if args.dry:
        print(" ".join(cmd))
        return 0
    return subprocess.call(cmd)


if __name__ == "__main__":
    raise SystemExit(main())
