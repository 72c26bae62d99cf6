"""A message to a webhook when a scheduled rebuild fails or a headline figure moves: two Prefect automations.

``make serve NOTIFY_URL=https://hooks.example.org/...`` (or, for a group's server, ``python -m flows.notify
--webhook URL``) saves one notification block (Prefect's ``CustomWebhookNotificationBlock``: a JSON POST of
``{"subject": ..., "body": ...}``, which Slack-, Teams- or Mattermost-style incoming webhooks and a plain HTTP
receiver all take) and two automations on the server, replaced whenever this runs again:

- *qa-pipeline: rebuild failed*: a ``rebuild`` flow run that ends Failed or Crashed;
- *qa-pipeline: headline moved*: the ``qa-pipeline.headlines.moved`` event a rebuild emits when a headline figure
  (``metrics/``) differs from the run before it, with the figures that moved.

The server sends the messages (its triggers and actions services), so they go out whichever process ran the
rebuild. The URL is the operator's, given where the server is set up; no run parameter names a host.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any
from urllib.parse import urlparse

BLOCK_NAME = "qa-pipeline-rebuild"
MOVED_EVENT = "qa-pipeline.headlines.moved"
FAILED = "qa-pipeline: rebuild failed"
MOVED = "qa-pipeline: headline moved"
MAX_LISTED = 20  # figures named in one message; the rest are counted


def check_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ValueError(f"the webhook must be an http(s) URL with a host, got {url[:80]!r}")
    return url


def moved_figures(after: dict[str, dict[str, dict]], before: dict[str, dict[str, dict]]) -> list[str]:
    """``track/system figure: before -> after`` for every headline figure that differs from the previous run
    (a system new or gone since then is not a move)."""
    from pipeline.common.headline import KEYS

    out = []
    for track, systems in sorted(after.items()):
        for system, figures in sorted(systems.items()):
            old = before.get(track, {}).get(system)
            if old is None:
                continue
            out += [f"{track}/{system} {key}: {old.get(key)} -> {figures.get(key)}"
                    for key in KEYS if key in figures and old.get(key) != figures.get(key)]
    return out


def emit_moved(repo: str, moved: list[str]) -> None:
    """The event the *headline moved* automation listens for; inside a rebuild run, Prefect relates it to the
    run."""
    from prefect.events import emit_event

    shown = moved[:MAX_LISTED] + ([f"... and {len(moved) - MAX_LISTED} more"] if len(moved) > MAX_LISTED else [])
    emit_event(event=MOVED_EVENT, resource={"prefect.resource.id": f"qa-pipeline.checkout.{repo}",
                                            "prefect.resource.name": repo},
               payload={"changed": len(moved), "figures": "\n".join(shown)})


def _automations(block_id: Any) -> list[Any]:
    from prefect.automations import Automation
    from prefect.events.actions import SendNotification
    from prefect.events.schemas.automations import EventTrigger, Posture

    failed = Automation(
        name=FAILED, description="a rebuild of a qa-pipeline checkout ended Failed or Crashed",
        trigger=EventTrigger(expect={"prefect.flow-run.Failed", "prefect.flow-run.Crashed"},
                             match_related={"prefect.resource.role": "flow", "prefect.resource.name": "rebuild"},
                             posture=Posture.Reactive, threshold=1),
        actions=[SendNotification(block_document_id=block_id, subject="qa-pipeline: {{ flow_run.name }} failed",
                                  body="{{ flow_run.name }} ended {{ flow_run.state.name }}: "
                                       "{{ flow_run.state.message }}")])
    moved = Automation(
        name=MOVED, description="a rebuild's headline figures differ from the run before it",
        trigger=EventTrigger(expect={MOVED_EVENT}, posture=Posture.Reactive, threshold=1),
        actions=[SendNotification(block_document_id=block_id,
                                  subject="qa-pipeline: {{ event.payload.changed }} headline figure(s) moved",
                                  body="{{ event.resource.name }}: {{ event.payload.changed }} headline figure(s) "
                                       "moved since the previous rebuild:\n{{ event.payload.figures }}")])
    return [failed, moved]


def set_up(url: str) -> list[str]:
    """Save the block and (re)create both automations on the server ``PREFECT_API_URL`` names; returns their
    names."""
    from prefect.blocks.notifications import CustomWebhookNotificationBlock
    from prefect.client.orchestration import get_client

    block = CustomWebhookNotificationBlock(name="qa-pipeline", url=check_url(url),
                                           json_data={"subject": "{{subject}}", "body": "{{body}}"})
    block_id = block.save(BLOCK_NAME, overwrite=True)
    names = []
    for automation in _automations(block_id):
        with get_client(sync_client=True) as client:  # the earlier ones of this name, however many
            for old in client.read_automations_by_name(name=automation.name):
                client.delete_automation(old.id)
        automation.create()
        names.append(automation.name)
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--webhook", required=True, help="the URL the messages are POSTed to (http or https)")
    args = ap.parse_args(argv)
    try:
        check_url(args.webhook)
    except ValueError as exc:
        print(f"notify: {exc}", file=sys.stderr)
        return 2
    names = set_up(args.webhook)
    print(f"notify: {', '.join(names)}: messages go to {urlparse(args.webhook).hostname}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
