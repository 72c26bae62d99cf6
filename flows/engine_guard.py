"""No flow-run process reads a result the server points it at: a run's state is data, never code.

Prefect's flow engine, once it has run a flow, returns the value the flow returned. When the flow never ran,
because the server answered the engine's "Running" with a final state, the engine falls back to that state's
``result()``: it fetches the result record the state names (a local path, or a storage block the caller may have
created with an HTTP address) and deserializes it with the serializer the record names, pickle included. Anyone
who can reach the API can force such a state on a Pending run (``POST /flow_runs/{id}/set_state`` with ``force``),
and the worker's, ``make serve``'s or a stage's process would then unpickle a stranger's bytes with its own
environment and secrets. The same fallback reads a reused subflow's server-held state.

:func:`install` replaces that fallback, for the sync and async flow engines, with a refusal that names the state
and reads nothing; a flow that ran returns (or raises) its own value as before. Every process that runs one of
the project's flows installs it before its engine starts: a stage's (``flows._common.run_flow``), the worker's
flow-run process (``flows.checkout_engine``), and any process that imports a module defining a served or
deployed flow (``flows.rebuild``, ``flows.sweep``: ``make serve``'s runner and the subprocess it spawns for each
run, which imports ``flows.rebuild`` to unpickle the flow). Not at ``import flows``: that would load Prefect's
settings before the entry points set ``PREFECT_HOME`` and the API address.
"""

from __future__ import annotations

from typing import Any

_MARK = "_qa_pipeline_guarded"


class ServerStateRefused(RuntimeError):
    """The server answered with a state this process did not produce; nothing it holds was read."""


def _refusal(engine: Any) -> ServerStateRefused:
    state = getattr(engine, "state", None)
    run = getattr(getattr(engine, "flow_run", None), "id", None)
    return ServerStateRefused(
        f"flow run {run}: the server answered with state {getattr(getattr(state, 'type', None), 'value', None)} "
        f"({getattr(state, 'name', None)}) before this process ran the flow; the result that state names is not "
        "read (a run's state comes from whoever can reach the API, and its result may be a pickle)")


def _ran_here(engine: Any) -> bool:
    """Whether the engine holds a value or an exception of its own: the flow ran in this process."""
    from prefect.states import State
    from prefect.utilities.annotations import NotSet

    own_value = engine._return_value is not NotSet and not isinstance(engine._return_value, State)
    return own_value or engine._raised is not NotSet


def install() -> None:
    """Guard ``FlowRunEngine.result`` and ``AsyncFlowRunEngine.result`` (idempotent)."""
    from prefect import flow_engine

    sync_cls, async_cls = flow_engine.FlowRunEngine, flow_engine.AsyncFlowRunEngine
    if not getattr(sync_cls.result, _MARK, False):
        original_sync = sync_cls.result

        def result(self, raise_on_failure: bool = True):
            if not _ran_here(self):
                raise _refusal(self)
            return original_sync(self, raise_on_failure)

        setattr(result, _MARK, True)
        sync_cls.result = result
    if not getattr(async_cls.result, _MARK, False):
        original_async = async_cls.result

        async def async_result(self, raise_on_failure: bool = True):
            if not _ran_here(self):
                raise _refusal(self)
            return await original_async(self, raise_on_failure)

        setattr(async_result, _MARK, True)
        async_cls.result = async_result
