"""The local Prefect UI's address: stable per checkout, and the console says why it is not 4200."""

from __future__ import annotations

import pytest

from pathlib import Path


def test_a_checkout_keeps_its_port_and_says_why_it_is_not_on_4200(tmp_path, monkeypatch):
    """With 4200 taken, each start used to pick a new random port (four in one hour) and every printed link
    died. Now a checkout gets a port of its own, says why, and keeps it on the next start even once 4200 is
    free again; another checkout gets another port."""
    import socket

    from flows import _server

    monkeypatch.delenv(_server.PORT_ENV, raising=False)
    alice, bob = tmp_path / "alice", tmp_path / "bob"
    alice.mkdir()
    bob.mkdir()
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    monkeypatch.setattr(_server, "DEFAULT_PORT", taken.getsockname()[1])  # "4200", held by someone else
    monkeypatch.chdir(alice)
    first, why = _server.preferred_port()
    assert first == _server.checkout_port() and "taken" in why and "keeps this port" in why
    taken.close()  # "4200" is free again: alice stays where her links point
    again, why_again = _server.preferred_port()
    assert again == first and "last-port" in why_again
    monkeypatch.chdir(bob)
    assert _server.preferred_port()[0] == _server.DEFAULT_PORT  # bob, a first start with "4200" free
    assert _server.checkout_port(Path("/srv/alice/qa-pipeline")) != _server.checkout_port(Path("/srv/bob/qa-pipeline"))


@pytest.mark.parametrize("value", ["abc", "0", "80", "70000", "-1", "4200x", " "])
def test_a_bad_port_variable_is_one_clear_error(monkeypatch, value):
    from flows import _server

    monkeypatch.setenv(_server.PORT_ENV, value)
    with pytest.raises(SystemExit, match="QA_PIPELINE_PREFECT_PORT=.*a port number from 1024 to 65535"):
        _server.preferred_port()


def test_a_bad_port_variable_stops_a_stage_with_its_message_before_any_server_starts(tmp_path, monkeypatch):
    """A stage (any command that needs the shared server) names the bad variable itself: the message is not
    left in the supervisor's log behind a 'the server exited' line."""
    from flows import _server

    monkeypatch.setenv(_server.PORT_ENV, "4200x")
    started = []
    monkeypatch.setattr(_server.subprocess, "Popen", lambda *a, **k: started.append(a))
    with pytest.raises(SystemExit, match="QA_PIPELINE_PREFECT_PORT='4200x': a port number"):
        _server.shared_api_url(timeout_s=1)
    assert not started


def test_a_refused_auth_string_is_a_message_not_a_traceback(tmp_path, monkeypatch):
    """A stage against a server that answers 401 (a wrong PREFECT_API_AUTH_STRING) ends with one line naming the
    variable and exit code 2."""
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    from flows import _common

    request = httpx.Request("GET", "http://127.0.0.1:9/api/flows/")
    refused = PrefectHTTPStatusError.from_httpx_error(httpx.HTTPStatusError(
        "401", request=request, response=httpx.Response(401, request=request)))

    def fails(*args, **kwargs):
        raise refused

    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:9/api")
    monkeypatch.setenv("PREFECT_API_AUTH_STRING", "wrong")
    monkeypatch.setattr(_common, "subflow_run_of_rebuild", fails)
    monkeypatch.setattr(_common, "reap_killed_runs", lambda: None)
    monkeypatch.setattr(_common, "stage_lease", lambda: __import__("contextlib").nullcontext())
    from prefect import flow

    @flow
    def nothing() -> None:
        pass

    assert _common.run_flow(nothing, "stage-x") == 2
    assert _common.auth_refusal(RuntimeError("x"), None) is None
