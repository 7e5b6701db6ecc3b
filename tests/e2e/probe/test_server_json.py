"""`--server-json FILE`: a registry server.json names the server; mcpprobe builds its command (or
URL), shows it, asks, runs it, and compares what runs with what the file says.

Real things only: the npm reference server through npx (from the test cache's npm prefix, offline),
a PyPI package installed by pip into a virtual environment made here (its console script starts the
fixture server), and the fixture server over HTTP for a remote.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import EVERYTHING_VERSION, FIXTURE, PY, fixture_cmd, http_server, run_cli

SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
PACKAGE = "mcpprobe-sj-fixture"
PACKAGE_VERSION = "1.2.3"


def _write(tmp_path: Path, doc: object, name: str = "server.json") -> str:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    return str(path)


def _doc(*, version: str = "1.0.0", name: str = "io.github.example/fixture-full", **extra: object) -> dict:
    return {"$schema": SCHEMA, "name": name, "description": "The fixture server", "version": version, **extra}


# ----- a PyPI package, installed by pip into a virtual environment made here -----

def _wheel(directory: Path) -> Path:
    """A wheel of a one-module package whose console script starts the fixture server with its
    arguments (and, first, notes in $SJ_STARTED that it was started, and writes its argv and
    environment as JSON to $SJ_ENV)."""
    module = (
        "import os, sys\n\n\n"
        "def main():\n"
        "    mark = os.environ.get('SJ_STARTED')\n"
        "    if mark:\n"
        "        with open(mark, 'a') as handle:\n"
        "            handle.write(' '.join(sys.argv[1:]) + '\\n')\n"
        "    seen = os.environ.get('SJ_ENV')\n"
        "    if seen:\n"
        "        import json\n"
        "        with open(seen, 'w') as handle:\n"
        "            json.dump({'argv': sys.argv[1:], 'env': dict(os.environ)}, handle)\n"
        f"    os.execv({PY!r}, [{PY!r}, {str(FIXTURE)!r}, *sys.argv[1:]])\n"
    )
    info = f"mcpprobe_sj_fixture-{PACKAGE_VERSION}.dist-info"
    files = {
        "mcpprobe_sj_fixture/__init__.py": module,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {PACKAGE_VERSION}\n",
        f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: mcpprobe-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        f"{info}/entry_points.txt": f"[console_scripts]\n{PACKAGE} = mcpprobe_sj_fixture:main\n",
    }
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = directory / f"mcpprobe_sj_fixture-{PACKAGE_VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return wheel


@pytest.fixture(scope="module")
def venv_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """bin/ of a virtual environment with the package installed by pip, offline (--no-index)."""
    root = tmp_path_factory.mktemp("sj-venv")
    made = subprocess.run([PY, "-m", "venv", str(root / "venv")], capture_output=True, text=True, timeout=300)
    if made.returncode != 0:
        pytest.skip(f"this Python cannot create a virtual environment: {made.stderr.strip()[-300:]}")
    python = root / "venv" / "bin" / "python"
    installed = subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps",
                                "--disable-pip-version-check", str(_wheel(root))],
                               capture_output=True, text=True, timeout=300)
    assert installed.returncode == 0, installed.stderr
    assert (root / "venv" / "bin" / PACKAGE).exists()
    return root / "venv" / "bin"


def _pypi(version: str = PACKAGE_VERSION, **extra: object) -> dict:
    return {"registryType": "pypi", "identifier": PACKAGE, "version": version, "transport": {"type": "stdio"},
            "packageArguments": [{"type": "positional", "valueHint": "scenario", "isRequired": True}], **extra}


def _path_env(venv_bin: Path) -> dict[str, str]:
    """A PATH of the virtual environment alone: no uvx, no pipx, no npx."""
    return {"PATH": str(venv_bin)}


def test_pypi_package_runs_from_a_virtual_environments_console_script(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    record = tmp_path / "record.jsonl"
    package = _pypi(environmentVariables=[{"name": "FIXTURE_RECORD", "isRequired": True},
                                          {"name": "SJ_STARTED", "isRequired": True}])
    file = _write(tmp_path, _doc(packages=[package]))
    result = run_cli(["list", "tools", "--json", "--server-json", file, "--input", "scenario=full", "--yes",
                      "-e", f"FIXTURE_RECORD={record}", "-e", f"SJ_STARTED={started}"], env=_path_env(venv_bin))
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert [tool["name"] for tool in doc["items"]][:2] == ["echo", "add"]
    assert doc["serverInfo"]["name"] == "fixture-full"
    assert started.read_text() == "full\n"  # the --input value became the positional argument
    assert any(json.loads(line).get("method") == "tools/list" for line in record.read_text().splitlines())
    assert "server-json-mismatch" not in [f["code"] for f in doc["findings"]]  # 1.0.0 and a shared name


@pytest.mark.parametrize("command", [["probe"], ["list", "tools"], ["check", "--only", "lifecycle"],
                                     ["call", "echo", "message=hi"]])
def test_a_version_that_disagrees_with_the_file_is_a_finding(tmp_path, venv_bin, command):
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}])
    file = _write(tmp_path, _doc(version="2.0.0", packages=[package]))
    result = run_cli([*command, "--json", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert result.exit_code == 0, result.stderr
    findings = [f for f in result.json["findings"] if f["code"] == "server-json-mismatch"]
    assert len(findings) == 1, findings
    assert findings[0]["severity"] == "warning"
    assert findings[0]["detail"]["field"] == "version"
    assert findings[0]["detail"]["serverInfo"] == "1.0.0"
    assert findings[0]["detail"]["serverJson"] == "2.0.0"
    assert findings[0]["message"] == 'the server reports version "1.0.0"; the server.json says "2.0.0"'


@pytest.mark.parametrize("command", [["probe"], ["call", "echo", "message=hi"], ["call", "no-such-tool"],
                                     ["check", "--only", "lifecycle"]])
def test_the_mismatch_is_reported_once_whatever_the_output_and_the_end(tmp_path, venv_bin, command):
    """The identity finding is added in one place, where the operation keeps the server's snapshot:
    once in the human output (shown while the server shuts down) as in JSON, for probe and check (the
    fleet's path) and call, and also when the command ends in an error after the handshake."""
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}])
    file = _write(tmp_path, _doc(version="2.0.0", packages=[package]))
    said = 'the server.json says "2.0.0"'
    human = run_cli([*command, "--server-json", file, "--yes"], env={**_path_env(venv_bin), "COLUMNS": "300"})
    assert human.stdout.count(said) + human.stderr.count(said) == 1, (human.stdout, human.stderr)
    result = run_cli([*command, "--json", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert result.exit_code == human.exit_code
    assert [f["code"] for f in result.json["findings"]].count("server-json-mismatch") == 1, result.json["findings"]


def test_a_name_that_shares_nothing_with_the_file_is_noted(tmp_path, venv_bin):
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}])
    file = _write(tmp_path, _doc(name="io.github.example/weather", packages=[package]))
    result = run_cli(["probe", "--json", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert result.exit_code == 0, result.stderr
    (finding,) = [f for f in result.json["findings"] if f["code"] == "server-json-mismatch"]
    assert finding["severity"] == "info"
    assert finding["detail"]["field"] == "name"


def test_without_a_terminal_and_without_yes_nothing_is_started(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}],
                    environmentVariables=[{"name": "SJ_STARTED", "value": str(started)}])
    file = _write(tmp_path, _doc(packages=[package]))
    result = run_cli(["probe", "--server-json", file], env=_path_env(venv_bin))
    assert result.exit_code == 2
    assert "add --yes" in result.stderr
    assert f"{venv_bin / PACKAGE} full" in result.stderr  # the command, shown as it would run
    assert "SJ_STARTED" in result.stderr
    assert not started.exists()
    again = run_cli(["probe", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert again.exit_code == 0, again.stderr
    assert started.read_text() == "full\n"


def test_a_missing_required_secret_is_named_and_never_asked_for(tmp_path, venv_bin):
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}],
                    environmentVariables=[{"name": "SJ_API_KEY", "isRequired": True, "isSecret": True}])
    file = _write(tmp_path, _doc(packages=[package]))
    result = run_cli(["probe", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert result.exit_code == 2
    assert "$.packages[0].environmentVariables[0]" in result.stderr
    assert "SJ_API_KEY" in result.stderr and "-e SJ_API_KEY=VALUE" in result.stderr
    given = run_cli(["probe", "--json", "--server-json", file, "--yes"],
                    env={**_path_env(venv_bin), "SJ_API_KEY": "s3cr3t-value-from-env"})
    assert given.exit_code == 0, given.stderr
    assert "s3cr3t-value-from-env" not in given.stdout + given.stderr


# ----- the npm reference server, through npx -----

@pytest.mark.interop
def test_npm_package_runs_through_npx(tmp_path, everything):
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip("npx is needed (it comes with npm)")
    prefix = everything.parents[3]  # PREFIX/node_modules/@modelcontextprotocol/server-everything/dist/index.js
    package = {"registryType": "npm", "identifier": "@modelcontextprotocol/server-everything",
               "version": EVERYTHING_VERSION, "transport": {"type": "stdio"}}
    file = _write(tmp_path, _doc(name="io.modelcontextprotocol/everything", version=EVERYTHING_VERSION,
                                 packages=[package]))
    # npx finds the package installed in the prefix it runs in (--cwd), and offline never asks the
    # npm registry: the same command a user runs, without the network.
    result = run_cli(["probe", "--json", "--server-json", file, "--yes", "--cwd", str(prefix),
                      "-e", "npm_config_offline=true"])
    assert result.exit_code == 0, result.stderr
    doc = result.json
    assert doc["serverInfo"]["name"] == "mcp-servers/everything"
    assert doc["kinds"]["tools"]["state"] == "complete"
    findings = [f for f in doc["findings"] if f["code"] == "server-json-mismatch"]
    # server-everything reports its own version, not the npm package's: the file's version disagrees.
    assert [f["detail"]["field"] for f in findings] == ["version"]
    assert findings[0]["detail"]["serverJson"] == EVERYTHING_VERSION


# ----- a remote: the fixture server over streamable HTTP -----

def test_remote_url_template_and_secret_header(tmp_path):
    remote = {"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp",
              "variables": {"port": {"isRequired": True}},
              "headers": [{"name": "Authorization", "value": "Bearer {token}",
                           "variables": {"token": {"isRequired": True, "isSecret": True}}}]}
    file = _write(tmp_path, _doc(remotes=[remote]))
    with http_server([*fixture_cmd("full"), "--http"]) as url:
        port = url.split(":")[2].split("/")[0]
        result = run_cli(["probe", "--json", "--server-json", file, "--input", f"port={port}", "--trace", "-"],
                         env={"token": "tok-9f8e7d6c5b4a"})
    assert result.exit_code == 0, result.stderr
    assert result.json["serverInfo"]["name"] == "fixture-full"
    assert "tok-9f8e7d6c5b4a" not in result.stdout + result.stderr  # the secret header, masked in the trace
    assert '"authorization": "[redacted]"' in result.stderr  # sent, and masked


# ----- bad input: exit 2, with the field named -----

NPM = {"registryType": "npm", "identifier": "x", "version": "1.0.0", "transport": {"type": "stdio"}}

BAD = {
    "not-json": ("{not json", "not JSON"),
    "not-an-object": ("[1, 2]", "$: must be an object"),
    "name-wrong-type": (_doc(name=5, packages=[NPM]), "$.name: must be a string"),
    "missing-version": ({"name": "a/b", "description": "d", "packages": [NPM]}, "$.version: required"),
    "missing-description": ({"name": "a/b", "version": "1", "packages": [NPM]}, "$.description: required"),
    "packages-not-array": (_doc(packages={"0": NPM}), "$.packages: must be an array"),
    "package-not-object": (_doc(packages=["npx x"]), "$.packages[0]: must be an object"),
    "missing-identifier": (_doc(packages=[{k: v for k, v in NPM.items() if k != "identifier"}]),
                           "$.packages[0].identifier: required"),
    "identifier-null": (_doc(packages=[{**NPM, "identifier": None}]), "$.packages[0].identifier: must be a string"),
    "missing-package-version": (_doc(packages=[{k: v for k, v in NPM.items() if k != "version"}]),
                                "$.packages[0].version: required"),
    "latest": (_doc(packages=[{**NPM, "version": "latest"}]), "$.packages[0].version"),
    "unknown-registry-type": (_doc(packages=[{**NPM, "registryType": "cargo"}]),
                              '$.packages[0].registryType: "cargo" is not a registry type'),
    "missing-transport": (_doc(packages=[{k: v for k, v in NPM.items() if k != "transport"}]),
                          "$.packages[0].transport: required"),
    "transport-type": (_doc(packages=[{**NPM, "transport": {"type": "carrier-pigeon"}}]),
                       "$.packages[0].transport.type"),
    "argument-type": (_doc(packages=[{**NPM, "packageArguments": [{"type": "flag", "value": "x"}]}]),
                      "$.packages[0].packageArguments[0].type"),
    "named-without-name": (_doc(packages=[{**NPM, "runtimeArguments": [{"type": "named", "value": "x"}]}]),
                           "$.packages[0].runtimeArguments[0].name: required"),
    "positional-without-value": (_doc(packages=[{**NPM, "packageArguments": [{"type": "positional"}]}]),
                                 "$.packages[0].packageArguments[0]: a positional argument needs"),
    "is-required-not-bool": (_doc(packages=[{**NPM, "environmentVariables": [{"name": "A", "isRequired": "yes"}]}]),
                             "$.packages[0].environmentVariables[0].isRequired: must be a boolean"),
    "env-without-name": (_doc(packages=[{**NPM, "environmentVariables": [{"value": "x"}]}]),
                         "$.packages[0].environmentVariables[0].name: required"),
    "remote-without-url": (_doc(remotes=[{"type": "streamable-http"}]), "$.remotes[0].url: required"),
    "remote-type": (_doc(remotes=[{"type": "stdio", "url": "http://127.0.0.1:1/mcp"}]), "$.remotes[0].type"),
    "nothing-at-all": (_doc(), "$: no packages and no remotes"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_server_json_is_a_usage_error_naming_the_field(tmp_path, case):
    doc, expected = BAD[case]
    file = _write(tmp_path, doc)
    result = run_cli(["probe", "--server-json", file, "--yes"], env={"PATH": str(tmp_path)})
    assert result.exit_code == 2, result.stdout + result.stderr
    assert expected in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_nothing_runnable_names_each_package_and_why(tmp_path):
    file = _write(tmp_path, _doc(packages=[NPM, {"registryType": "mcpb", "identifier": "https://example.com/x.mcpb",
                                                 "fileSha256": "0" * 64, "transport": {"type": "stdio"}}]))
    result = run_cli(["probe", "--server-json", file, "--yes"], env={"PATH": str(tmp_path)})  # no npx there
    assert result.exit_code == 2
    assert "$.packages: nothing this machine can run" in result.stderr
    assert "$.packages[0] (npm): npx is not on the PATH" in result.stderr
    assert "$.packages[1] (mcpb)" in result.stderr


@pytest.mark.parametrize(("options", "expected"), [
    (["--package", "3"], "$.packages: --package 3 is out of range: the file has 1 package (0 to 0)"),
    (["--remote", "0"], "$.remotes: --remote 0: the file has no remotes"),
    (["--package", "0", "--remote", "0"], "either --package N or --remote N"),
    (["--package", "-1"], "must be 0 or more"),
])
def test_choices_out_of_range_are_usage_errors(tmp_path, options, expected):
    file = _write(tmp_path, _doc(packages=[NPM]))
    result = run_cli(["probe", "--server-json", file, "--yes", *options], env={"PATH": str(tmp_path)})
    assert result.exit_code == 2
    assert expected in result.stderr, result.stderr


@pytest.mark.parametrize("args", [
    ["probe", "--package", "0", "--", "true"],
    ["list", "tools", "--input", "a=b", "http://127.0.0.1:1/mcp"],
    ["probe", "--server-json", "x.json", "--", "true"],
    ["probe", "--server-json", "x.json", "-s", "name"],
    ["call", "echo", "--server-json", "x.json", "http://127.0.0.1:1/mcp"],
])
def test_server_json_options_alone_or_with_another_server_are_usage_errors(args):
    result = run_cli(args)
    assert result.exit_code == 2
    assert "--server-json" in result.stderr


def test_a_file_that_does_not_exist(tmp_path):
    result = run_cli(["check", "--server-json", str(tmp_path / "nope.json"), "--yes"])
    assert result.exit_code == 2
    assert "cannot read" in result.stderr


def test_the_environment_given_with_e_overrides_the_users(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}],
                    environmentVariables=[{"name": "SJ_STARTED", "isRequired": True}])
    file = _write(tmp_path, _doc(packages=[package]))
    result = run_cli(["probe", "--server-json", file, "--yes", "-e", f"SJ_STARTED={started}"],
                     env={**_path_env(venv_bin), "SJ_STARTED": str(tmp_path / "other.txt")})
    assert result.exit_code == 0, result.stderr
    assert started.exists() and not (tmp_path / "other.txt").exists()
    assert os.environ.get("SJ_STARTED") is None


# ----- on a terminal: shown, then asked -----

def test_on_a_terminal_the_command_is_shown_and_asked_about(tmp_path, venv_bin):
    from tests.e2e.hostile.test_terminal_safety import run_in_pty

    started = tmp_path / "started.txt"
    package = _pypi(packageArguments=[{"type": "positional", "value": "full"}],
                    environmentVariables=[{"name": "SJ_STARTED", "value": str(started)}])
    file = _write(tmp_path, _doc(packages=[package]))
    code, shown = run_in_pty(["probe", "--server-json", file], env=_path_env(venv_bin), typed="n\n")
    assert code == 3, shown
    assert f"{venv_bin / PACKAGE} full" in shown and "Run it?" in shown and "not confirmed" in shown
    # The command and the environment's names each on a line of their own, not after a written "\n".
    assert "\\n" not in shown, shown
    assert f"  {venv_bin / PACKAGE} full" in shown.splitlines()
    assert "  with environment variables:" in shown.splitlines()
    assert f"    SJ_STARTED={started}" in shown.splitlines()  # the value too: it can change what runs
    assert not started.exists()
    code, shown = run_in_pty(["probe", "--server-json", file], env=_path_env(venv_bin), typed="y\n")
    assert code == 0, shown
    assert started.read_text() == "full\n"


def test_the_publishers_text_reaches_the_terminal_inert(tmp_path, venv_bin):
    from tests.e2e.hostile.test_terminal_safety import assert_inert, run_in_pty

    package = _pypi(packageArguments=[{"type": "positional", "value": "full\x1b]0;pwned\x07\x1b[2J"}],
                    environmentVariables=[{"name": "SJ_X", "value": "1"}])
    file = _write(tmp_path, _doc(packages=[package]))
    code, shown = run_in_pty(["probe", "--server-json", file], env=_path_env(venv_bin), typed="n\n")
    assert code == 3, shown
    assert_inert(shown)


def test_sarif_locates_the_findings_at_the_package_that_ran(tmp_path, venv_bin):
    from tests.unit.render.test_golden import sarif_errors

    npm = {**NPM, "identifier": "not-run-here"}
    package = _pypi(version=PACKAGE_VERSION, packageArguments=[{"type": "positional", "value": "full"}])
    text = json.dumps(_doc(version="2.0.0", packages=[npm, package]), indent=2)
    file = _write(tmp_path, text)
    result = run_cli(["probe", "--format", "sarif", "--server-json", file, "--yes"], env=_path_env(venv_bin))
    assert result.exit_code == 0, result.stderr
    assert sarif_errors(result.stdout) == []
    results = json.loads(result.stdout)["runs"][0]["results"]
    (mismatch,) = [r for r in results if r["ruleId"] == "server-json-mismatch"]
    physical = mismatch["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == Path(file).as_uri()
    line = physical["region"]["startLine"]
    # packages[1] (npx is not on this PATH, so the second package ran): its opening brace, after the first's.
    assert text.splitlines()[line - 1].strip() == "{"
    assert '"registryType": "pypi"' in text.splitlines()[line]


# ----- --input: only names the chosen package or remote knows, each once -----

def _marked_pypi(started: Path, **extra: object) -> dict:
    """The PyPI package whose console script notes in `started` that it was started (the file's
    directory is a {variable} with the publisher's fixed value); its scenario is a positional
    argument that defaults to one that crashes, so a run shows which value was used."""
    return _pypi(packageArguments=[{"type": "positional", "valueHint": "scenario", "default": "crash-on-start"}],
                 environmentVariables=[{"name": "SJ_STARTED", "value": f"{{dir}}/{started.name}",
                                        "variables": {"dir": {"value": str(started.parent)}}},
                                       {"name": "SJ_API_TOKEN", "isSecret": True}], **extra)


@pytest.mark.parametrize("command", [["probe"], ["list", "tools"], ["check", "--only", "lifecycle"],
                                     ["call", "echo", "message=hi"]])
def test_an_unknown_input_name_is_a_usage_error_and_nothing_starts(tmp_path, venv_bin, command):
    started = tmp_path / "started.txt"
    file = _write(tmp_path, _doc(packages=[_marked_pypi(started)]))
    result = run_cli([*command, "--server-json", file, "--yes", "--input", "scenaro=full", "--input", "API_TOKN=x"],
                     env=_path_env(venv_bin))
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "$.packages[0]: --input API_TOKN, scenaro: no input of this package is known by these names" in result.stderr
    assert "the names it knows: dir, scenario" in result.stderr  # sorted
    assert "its environment variables, given with -e NAME=VALUE or the environment: SJ_API_TOKEN, SJ_STARTED" \
        in result.stderr
    assert not started.exists()  # the publisher's command never ran
    assert result.stdout == ""


def test_an_input_with_a_default_or_a_fixed_value_takes_its_name(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    file = _write(tmp_path, _doc(packages=[_marked_pypi(started)]))
    # scenario has a default (crash-on-start): the user's value replaces it. {dir} has the
    # publisher's fixed value: its name is known, and the publisher's value is what runs.
    result = run_cli(["list", "tools", "--json", "--server-json", file, "--yes", "--input", "scenario=full",
                      "--input", f"dir={tmp_path / 'elsewhere'}"], env=_path_env(venv_bin))
    assert result.exit_code == 0, result.stderr
    assert result.json["serverInfo"]["name"] == "fixture-full"
    assert started.read_text() == "full\n"
    assert not (tmp_path / "elsewhere").exists()


def test_an_environment_variables_name_given_with_input_points_to_e(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    file = _write(tmp_path, _doc(packages=[_marked_pypi(started)]))
    result = run_cli(["probe", "--server-json", file, "--yes", "--input", "SJ_API_TOKEN=s3cr3t-typed"],
                     env=_path_env(venv_bin))
    assert result.exit_code == 2, result.stderr
    assert ("--input SJ_API_TOKEN: SJ_API_TOKEN is an environment variable of this package: give it with "
            "-e SJ_API_TOKEN=VALUE or set it in the environment") in result.stderr
    assert "s3cr3t-typed" not in result.stderr
    assert not started.exists()


def test_a_name_another_entry_knows_says_how_to_choose_it(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    remote = {"type": "streamable-http", "url": "http://127.0.0.1:{port}/mcp", "variables": {"port": {}}}
    file = _write(tmp_path, _doc(packages=[_marked_pypi(started)], remotes=[remote]))
    result = run_cli(["probe", "--server-json", file, "--yes", "--input", "port=1"], env=_path_env(venv_bin))
    assert result.exit_code == 2, result.stderr
    assert "$.packages[0]: --input port: no input of this package is known by that name" in result.stderr
    assert "$.remotes[0] knows port (--remote 0 chooses it)" in result.stderr
    assert not started.exists()


def test_a_remotes_url_variables_and_headers_are_its_input_names(tmp_path):
    record = tmp_path / "record.jsonl"
    remote = {"type": "streamable-http", "url": "http://127.0.0.1:{port}/{path}",
              "variables": {"port": {"default": "1"}, "path": {"default": "mcp"}},
              "headers": [{"name": "X-Team", "default": "none"},
                          {"name": "Authorization", "value": "Bearer {token}",
                           "variables": {"token": {"default": "t"}}}]}
    file = _write(tmp_path, _doc(remotes=[remote]))
    with http_server([*fixture_cmd("full"), "--http"], env={"FIXTURE_RECORD": str(record)}) as url:
        port = url.split(":")[2].split("/")[0]
        typo = run_cli(["probe", "--server-json", file, "--input", f"prot={port}"])
        assert typo.exit_code == 2, typo.stderr
        assert ("$.remotes[0]: --input prot: no input of this remote is known by that name; the names it knows: "
                "Authorization, X-Team, path, port, token") in typo.stderr
        assert not record.exists() or record.read_text() == ""  # nothing was sent
        result = run_cli(["probe", "--json", "--server-json", file, "--input", f"port={port}", "--input", "path=mcp",
                          "--input", "X-Team=blue", "--input", "token=tok-1a2b3c4d", "--trace", "-"])
    assert result.exit_code == 0, result.stderr
    assert result.json["serverInfo"]["name"] == "fixture-full"
    assert '"x-team": "blue"' in result.stderr


def test_hostile_names_in_the_message_are_inert(tmp_path, venv_bin):
    started = tmp_path / "started.txt"
    package = _marked_pypi(started)
    package["packageArguments"].append({"type": "positional", "valueHint": "evil\x1b]0;pwned\x07\nhint",
                                        "default": "x"})
    file = _write(tmp_path, _doc(packages=[package]))
    result = run_cli(["probe", "--server-json", file, "--yes", "--input", "nope\x1b[2J=1"], env=_path_env(venv_bin))
    assert result.exit_code == 2, result.stderr
    assert "\x1b" not in result.stderr and "\x07" not in result.stderr
    assert "'evil\\x1b]0;pwned\\x07\\nhint'" in result.stderr  # quoted: one name, written out
    assert not started.exists()


@pytest.mark.parametrize(("inputs", "expected"), [
    (["scenario=full", "scenario=other"], "'scenario' is given more than once: give each input once"),
    (["scenario"], "'scenario': expected NAME=VALUE (no '=')"),
    (["=s3cr3t-value"], "expected NAME=VALUE: the NAME before '=' is empty"),
    (["a=b\0c"], "holds a NUL character"),  # refused while the command line is read
])
def test_malformed_or_repeated_inputs_are_refused_before_the_file_is_read(tmp_path, inputs, expected):
    words = [word for value in inputs for word in ("--input", value)]
    result = run_cli(["probe", "--server-json", str(tmp_path / "not-there.json"), "--yes", *words])
    assert result.exit_code == 2, result.stderr
    assert expected in result.stderr, result.stderr
    assert "cannot read" not in result.stderr  # refused at parsing, before the file is opened
    assert "s3cr3t-value" not in result.stderr
