"""Shared fixtures: the repository root, ../shared, and a small sample built once per session."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
os.environ.setdefault("QA_PIPELINE_NO_PROGRESS", "1")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("DO_NOT_TRACK", "1")
os.environ.setdefault("QA_PIPELINE_PYWB_BIN", str(REPO / ".venv-pywb" / "bin"))
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Two workers on two cores each run torch with its section's cpu_threads (2): OpenMP threads that spin while
    # they wait then take the cores from the other worker's (a training step measured 37 s each, two at once,
    # against 7 s alone). Waiting threads that sleep instead cost two at once 11.5 s each. Numerics unchanged:
    # the thread count is the same, only how an idle thread waits. Set before torch loads, for this worker and
    # every process it starts.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


import pipeline.params  # noqa: E402
from tests.params_files import PROJECT_PARAMS  # noqa: E402

pipeline.params.PROJECT_PARAMS_FILE = PROJECT_PARAMS  # the committed values, whatever an experiment left


@pytest.fixture(scope="session", autouse=True)
def _dvc_site_cache_of_this_session(tmp_path_factory) -> Iterator[None]:
    """Every dvc command the tests start keeps its per-repository state (the data index, file hashes by inode
    and mtime) under this session's temp folder, not in the machine's /var/tmp/dvc, where an entry left for the
    same path by an earlier session (pytest reuses its numbered folders on a machine built from an image) could
    make DVC trust what is not in a new clone's cache."""
    before = os.environ.get("DVC_SITE_CACHE_DIR")
    os.environ["DVC_SITE_CACHE_DIR"] = str(tmp_path_factory.mktemp("dvc-site-cache"))
    yield
    if before is None:
        os.environ.pop("DVC_SITE_CACHE_DIR", None)
    else:
        os.environ["DVC_SITE_CACHE_DIR"] = before


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is not present")
    return SHARED


@pytest.fixture(scope="session")
def small_sample_params():
    from pipeline.params import project_section

    # every generator setting the tests' expectations were made for is pinned here, so the project's default
    # sample (params.yaml) can change without changing the test session's pages and questions
    return project_section("sample", seed=7, n_articles=40, duplicate_captures=8, cross_domain_duplicates=3,
                           non_article_pages=8, out_of_range_captures=2, wiki_articles=300,
                           sections_per_article=(2, 6), question_heading_share=0.6, explainer_share=1.0,
                           section_words=(50, 110))


@pytest.fixture(scope="session")
def small_sample(tmp_path_factory, small_sample_params) -> Path:
    """A 40-article sample (and a 300-article dump) built once for the whole test session."""
    from pipeline.sample.build import build_sample

    out = tmp_path_factory.mktemp("sample")
    build_sample(small_sample_params, out)
    return out


def venv_bin(name: str) -> str:
    return str(Path(sys.executable).with_name(name))


@pytest.fixture(scope="session")
def noida_es(tmp_path_factory):
    """noida-db (a real HTTP server speaking the Elasticsearch API) on 127.0.0.1, stopped by PID."""
    from tests.local_es import noida_elasticsearch

    with noida_elasticsearch(tmp_path_factory.mktemp("noida")) as url:
        yield url


@contextlib.contextmanager
def prefect_server(home: Path, **settings: str) -> Iterator[str]:
    """A Prefect server on a free 127.0.0.1 port, stopped by PID; yields its API URL. ``PREFECT_HOME=home`` and
    the server ``settings`` (environment variables) hold while the context is open, then are restored."""
    from flows._server import start_server
    from pipeline.common.processes import free_port, stop_process_group

    saved = {k: os.environ.get(k) for k in ("PREFECT_HOME", *settings)}
    os.environ.update(PREFECT_HOME=str(home), **settings)
    try:
        port = free_port()
        server = start_server("127.0.0.1", port, home / "server.log")
        try:
            yield f"http://127.0.0.1:{port}/api"
        finally:
            stop_process_group(server)
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# Where the suite's time goes: with QA_PIPELINE_TEST_DURATIONS=FILE, each test's seconds (setup, call and
# teardown together; a session fixture's setup counts for the first test that asked for it), whether it is
# marked slow, and the processor, written as JSON when the session ends. `make test-durations` refreshes the
# committed profile (benchmarks/results/test_durations.json).
_DURATIONS: dict[str, dict] = {}
_STARTED = time.monotonic()


def pytest_runtest_logreport(report) -> None:
    # under pytest-xdist the controller sees every worker's reports (and collects no items): the marker comes
    # from the report's keywords
    entry = _DURATIONS.setdefault(report.nodeid, {"seconds": 0.0, "outcome": "passed"})
    entry["seconds"] += report.duration
    entry["slow"] = entry.get("slow") or "slow" in report.keywords
    if report.failed or (report.skipped and entry["outcome"] == "passed"):
        entry["outcome"] = "failed" if report.failed else "skipped"


def _file_seconds() -> dict[str, float]:
    """Seconds per test file in the committed profile (``benchmarks/results/test_durations.json``)."""
    import json

    try:
        rows = json.loads((REPO / "benchmarks/results/test_durations.json").read_text(encoding="utf-8"))["by_test"]
    except (OSError, ValueError, KeyError):
        return {}
    seconds: dict[str, float] = {}
    for row in rows:
        path = row["test"].split("::")[0]
        seconds[path] = seconds.get(path, 0.0) + float(row["seconds"])
    return seconds


def pytest_collection_modifyitems(items) -> None:
    # the slowest files first, each file's tests together and in their order: on parallel workers
    # (`make test`, pytest-xdist --dist loadfile) a 6-minute file started last would run alone at the end.
    # From a committed file, so every worker collects the same order (xdist requires it).
    seconds = _file_seconds()
    order = {path: rank for rank, path in enumerate(dict.fromkeys(item.nodeid.split("::")[0] for item in items))}
    items.sort(key=lambda item: (-seconds.get(item.nodeid.split("::")[0], 0.0), order[item.nodeid.split("::")[0]]))
    for item in items:
        _DURATIONS.setdefault(item.nodeid, {"seconds": 0.0, "outcome": "passed"})["slow"] = (
            item.get_closest_marker("slow") is not None)


def pytest_sessionfinish(session) -> None:
    target = os.environ.get("QA_PIPELINE_TEST_DURATIONS")
    if not target or hasattr(session.config, "workerinput"):  # an xdist worker: the controller writes it
        return
    from benchmarks.test_durations import write_profile

    workers = getattr(session.config.option, "numprocesses", None) or 0
    write_profile(Path(target), {k: v for k, v in _DURATIONS.items() if v["seconds"] > 0 or v["outcome"] != "passed"},
                  wall_seconds=time.monotonic() - _STARTED, workers=int(workers))


def die_after_checkpoint(monkeypatch, step: int):
    """Kill a training run (KeyboardInterrupt) right after its checkpoint at ``step`` was written whole; returns
    the real checkpoint writer, for the test to put back before it resumes the run."""
    import pipeline.training.finetune as finetune

    real = finetune._save_checkpoint

    def save_then_die(accelerator, out_dir, at, history):
        real(accelerator, out_dir, at, history)
        if at == step:
            raise KeyboardInterrupt("killed")

    monkeypatch.setattr(finetune, "_save_checkpoint", save_then_die)
    return real
