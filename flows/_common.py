"""What every stage flow shares: params validated before the flow starts, and a retry condition."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from pipeline.params import DEFAULT_PARAMS_FILE, Params, ParamsError, load_params
from pipeline.transient import is_transient


def retry_if_transient(task: Any, task_run: Any, state: Any) -> bool:
    """Prefect ``retry_condition_fn``: retry only failures that can succeed on a second try."""
    try:
        state.result()
    except Exception as exc:  # noqa: BLE001 - the state's own exception, re-raised by result()
        return is_transient(exc)
    return False


def stage_main(flow: Callable[..., Any], argv: list[str] | None = None,
               variants: tuple[str, ...] | None = None) -> int:
    """CLI of ``python -m flows.<stage> [VARIANT]``: validate params first, so a bad file writes nothing at
    all. ``variants``: the values a ``foreach`` stage passes as its one positional argument."""
    ap = argparse.ArgumentParser(prog=f"python -m flows.{getattr(flow, 'name', 'stage')}")
    if variants:
        ap.add_argument("variant", choices=variants)
    ap.add_argument("--params", default=str(DEFAULT_PARAMS_FILE), help="params file (default: params.yaml)")
    args = ap.parse_args(argv)
    try:
        load_params(args.params)
    except ParamsError as exc:
        print(exc, file=sys.stderr)
        return 2
    if variants:
        flow(args.variant, params_file=args.params)
    else:
        flow(params_file=args.params)
    return 0


def params_of(params_file: str) -> Params:
    return load_params(params_file)
