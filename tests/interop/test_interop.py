"""Against servers mcpprobe did not write: the npm reference server and the SDK-based demo.

server-everything is installed from the npm registry into the test cache on first use; these
tests skip with a visible reason only where node or npm is missing.
"""

from __future__ import annotations

import pytest
from conftest import BIND_LOOPBACK, PY, http_server, run_cli

DEMO = [PY, "-m", "mcpprobe.demo"]


def _everything_cmd(entry) -> list[str]:
    return ["node", str(entry)]


def test_everything_over_stdio(everything):
    result = run_cli(["probe", "--json", "--", *_everything_cmd(everything)])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["serverInfo"]["name"] == "mcp-servers/everything"
    assert doc["era"] == "legacy"
    assert doc["protocolVersion"] == "2025-11-25"
    assert doc["capabilities"]["resources"] == {"subscribe": True, "listChanged": True}
    kinds = doc["kinds"]
    assert {k: v["state"] for k, v in kinds.items()} == dict.fromkeys(kinds, "complete")
    assert kinds["tools"]["count"] == 13
    assert kinds["resources"]["count"] == 7
    assert kinds["templates"]["count"] == 2
    assert kinds["prompts"]["count"] == 4
    assert {"echo", "get-sum"} <= {t["name"] for t in kinds["tools"]["items"]}
    assert [f for f in doc["findings"] if f["severity"] == "error"] == []


def test_everything_list_tools_pipe_to_jq_shape(everything):
    result = run_cli(["list", "tools", "--json", "--", *_everything_cmd(everything)])
    names = [item["name"] for item in result.json["items"]]
    assert "echo" in names and result.json["state"] == "complete"


@pytest.mark.parametrize("mode, path", [("streamableHttp", "/mcp"), ("sse", "/sse")])
def test_everything_over_http(everything, mode, path):
    # PORT=0: the kernel picks a free port and the preload prints it (a port picked here and released
    # could be taken by another test worker before the server binds it).
    env = {"PORT": "0", "NODE_OPTIONS": f"--require {BIND_LOOPBACK}", "BIND_LOOPBACK_ANNOUNCE": "1"}
    with http_server(["node", str(everything), mode], env=env) as url:
        result = run_cli(["probe", "--json", f"{url}{path}"])
    doc = result.json
    assert result.exit_code == 0, (result.stdout[-2000:], result.stderr)
    assert doc["transport"] == ("sse" if mode == "sse" else "http")
    assert doc["kinds"]["tools"]["count"] == 13


def test_demo_over_stdio_paginates():
    result = run_cli(["probe", "--json", "--", *DEMO])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["serverInfo"]["name"] == "mcpprobe-demo"
    assert doc["kinds"]["tools"]["pages"] == 3 and doc["kinds"]["tools"]["count"] == 12
    assert doc["kinds"]["resources"]["pages"] == 2


@pytest.mark.parametrize("flag", ["--http", "--sse"])
def test_demo_over_http_and_sse(flag):
    with http_server([*DEMO, flag, "0"]) as url:
        result = run_cli(["probe", "--json", url])
    doc = result.json
    assert result.exit_code == 0, result.stderr
    assert doc["transport"] == ("sse" if flag == "--sse" else "http")
    assert doc["kinds"]["tools"]["count"] == 12


def test_demo_legacy_and_modern_agree():
    legacy = run_cli(["probe", "--json", "--protocol", "legacy", "--", *DEMO]).json
    modern = run_cli(["probe", "--json", "--protocol", "modern", "--", *DEMO]).json
    assert legacy["era"] == "legacy" and modern["era"] == "modern"
    for kind in ("tools", "resources", "templates", "prompts"):
        assert legacy["kinds"][kind]["count"] == modern["kinds"][kind]["count"]


def test_a_refusal_does_not_show_the_servers_stderr(everything):
    """server-everything writes to stderr at start; when mcpprobe refuses, that is not the server's fault."""
    refused = run_cli(["call", "ech", "--json", "--", *_everything_cmd(everything)])
    assert refused.exit_code == 3
    assert refused.json["error"]["detail"]["suggestions"][0] == "echo"
    assert refused.json["serverStderr"] == []
    assert "server's stderr" not in refused.stderr
