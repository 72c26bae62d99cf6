"""A params value written as a ``dvc exp run -S key=value`` override that Hydra reads back as the same value.

DVC hands ``-S`` to Hydra's override grammar, where an unquoted comma makes a sweep, ``json.dumps`` turns
"é" into a literal ``\\u00e9``, and a backslash before a quote escapes it. Strings are therefore written
double-quoted with only what Hydra's grammar needs escaped: quotes, and backslashes that precede a quote or
the closing one. The values themselves were checked first (``pipeline.experiments.sweep``: no ``${...}``).
"""

from __future__ import annotations

import json
import re
from typing import Any

_BACKSLASHES_BEFORE_QUOTE = re.compile(r'(\\+)(?="|$)')


def hydra_value(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, str):
        escaped = _BACKSLASHES_BEFORE_QUOTE.sub(lambda m: m.group(1) * 2, value).replace('"', '\\"')
        return f'"{escaped}"'
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(hydra_value(v) for v in value) + "]"
    raise TypeError(f"not a params override value: {value!r}")


def override(key: str, value: Any) -> str:
    return f"{key}={hydra_value(value)}"
