"""YAML from a stranger (an offline node's params, a profile someone sends): plain data, bounded.

``yaml.safe_load`` builds no objects, but it does expand aliases into shared references that every later
writer (``yaml.dump``, DVC's override writer, ``json.dumps``) walks in full: a 6 KB file of nested aliases
("billion laughs") becomes gigabytes there. A params file never needs an anchor, so one is refused, as is a
file larger than the caller's limit or nested deeper than any params file is, before anything is built from it.
"""

from __future__ import annotations

from typing import Any

import yaml

MAX_BYTES = 1 << 20  # a params.yaml is about 20 KB
MAX_DEPTH = 32  # a params.yaml nests three or four levels


class PlainYAMLError(ValueError):
    """The text is not plain YAML within the limits; the message names the source."""


def load_plain_yaml(text: str | bytes, source: str, max_bytes: int = MAX_BYTES) -> Any:
    size = len(text.encode("utf-8") if isinstance(text, str) else text)
    if size > max_bytes:
        raise PlainYAMLError(f"{source}: {size} bytes of YAML, over the {max_bytes}-byte limit")
    try:
        depth = 0
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise PlainYAMLError(f"{source}: YAML anchors and aliases are not accepted here (a params file "
                                     "has none)")
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:  # checked as the events come: 50,000 levels would recurse for a minute
                    raise PlainYAMLError(f"{source}: nested more than {MAX_DEPTH} levels deep (a params file "
                                         "has a few)")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PlainYAMLError(f"{source}: not valid YAML ({exc})") from None
