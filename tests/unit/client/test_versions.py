"""The SDK version mcpprobe reports (in --version and in clientInfo) is the installed one."""

from __future__ import annotations

from importlib.metadata import version

from mcpprobe.client.versions import sdk_version


def test_sdk_version_matches_the_installed_distribution():
    assert sdk_version() == version("mcp")
