"""The user's secrets never appear in anything mcpprobe prints, even when a server echoes them.

A planted secret goes in through --env and --header; the servers here print it back on stderr,
on stdout as a non-JSON line, and in error bodies. Every output mode is searched for it.
"""

from __future__ import annotations

import pytest
from conftest import PY, fixture_http, run_cli, run_subprocess

SECRET = "planted-Secret-9f2c7e"
ECHO = ("import os,sys; s=os.environ['API_TOKEN']; print('token=' + s); print('stderr sees ' + s, file=sys.stderr); "
        "sys.stdout.flush(); sys.exit(2)")


@pytest.mark.parametrize("args", [[], ["--json"], ["--server-stderr", "live"], ["--json", "--server-stderr", "live"]])
def test_env_secret_echoed_by_the_server_is_redacted(args):
    result = run_subprocess(["probe", *args, "--env", f"API_TOKEN={SECRET}", "--", PY, "-c", ECHO])
    assert result.exit_code == 4
    assert SECRET not in result.stdout + result.stderr
    assert "[redacted]" in result.stdout + result.stderr


def test_header_secret_is_never_printed():
    with fixture_http("auth-required") as url:
        for extra in ([], ["--json"]):
            result = run_cli(["probe", *extra, "--header", f"Authorization: Bearer {SECRET}", url])
            assert result.exit_code == 7
            assert SECRET not in result.stdout + result.stderr


@pytest.mark.parametrize("args", [["--format", "junit"], ["--format", "openmetrics"], ["--trace", "-"],
                                  ["--trace", "-", "--json"], ["-v"]])
def test_every_other_output_mode_masks_it_too(args):
    result = run_subprocess(["probe", *args, "--env", f"API_TOKEN={SECRET}", "--", PY, "-c", ECHO])
    assert result.exit_code == 4
    assert SECRET not in result.stdout + result.stderr
