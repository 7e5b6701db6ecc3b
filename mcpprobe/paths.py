"""Where mcpprobe keeps its own files: the one directory for its config.yaml and stored tokens.

Standard library only, at the bottom of the house: the config reader (fleet/) and the token store
(auth/) both ask it."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path


def user_config_dir(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """mcpprobe's own directory, the one place for its config.yaml and its stored tokens:
    $MCPPROBE_CONFIG_DIR when set; else $XDG_CONFIG_HOME/mcpprobe on every system when set; else
    ~/.config/mcpprobe (Linux), ~/Library/Application Support/mcpprobe (macOS), %APPDATA%\\mcpprobe."""
    env = os.environ if env is None else env
    platform = platform or sys.platform
    if env.get("MCPPROBE_CONFIG_DIR"):
        return Path(env["MCPPROBE_CONFIG_DIR"]).expanduser()
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "mcpprobe"
    return app_dir(env, platform) / "mcpprobe"


def home_dir(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())


def app_dir(env: Mapping[str, str], platform: str) -> Path:
    """Where desktop applications keep their settings on this system."""
    if platform == "darwin":
        return home_dir(env) / "Library" / "Application Support"
    if platform.startswith("win"):
        return Path(env.get("APPDATA") or home_dir(env) / "AppData" / "Roaming")
    return Path(env.get("XDG_CONFIG_HOME") or home_dir(env) / ".config")
