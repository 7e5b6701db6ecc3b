"""The installed SDK's version, found cheaply.

`importlib.metadata` costs about 20 ms to import, a third of `mcpprobe --help`, and a probe
looks the version up on every run (it goes into clientInfo). An installed distribution is a
`mcp-<version>.dist-info` folder on sys.path, which a directory listing finds in well under a
millisecond; importlib.metadata remains the fallback for anything unusual.
"""

from __future__ import annotations

import os
import re
import sys
from functools import cache

_DIST_INFO = re.compile(r"^mcp-(\d[^-]*)\.dist-info$")


@cache
def sdk_version() -> str:
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            match = _DIST_INFO.match(name)
            if match:
                return match.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mcp")
    except PackageNotFoundError:
        return "not installed"
