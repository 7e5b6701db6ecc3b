"""How a server.json package becomes a command, for each registry type and runtime (mcpprobe.fleet.serverjson).

`which` is the PATH lookup, given here as the set of programs a machine has; the e2e tests
(tests/e2e/probe/test_server_json.py) run real packages through npx and a virtual environment.
"""

from __future__ import annotations

import pytest

from mcpprobe.errors import UsageProblem
from mcpprobe.fleet import serverjson
from mcpprobe.fleet.serverjson import Published, build, check, identity_findings


def _which(*programs: str):
    return lambda name: f"/bin/{name}" if name in programs else None


def _doc(*packages: dict, remotes: tuple = ()) -> dict:
    doc = {"name": "io.github.example/weather", "description": "d", "version": "1.0.0", "packages": list(packages),
           "remotes": list(remotes)}
    check(doc, "server.json")
    return doc


def test_npm_runtime_and_package_arguments_around_the_package():
    package = {"registryType": "npm", "identifier": "@scope/server", "version": "1.2.3", "runtimeHint": "npx",
               "transport": {"type": "stdio"},
               "runtimeArguments": [{"type": "named", "name": "--node-options", "value": "--max-old-space-size=512"}],
               "packageArguments": [{"type": "named", "name": "--mode", "default": "local"},
                                    {"type": "positional", "valueHint": "dir", "isRequired": True}]}
    launch = build(_doc(package), "f", inputs={"dir": "/data"}, environ={}, which=_which("npx"))
    assert launch.command == ("/bin/npx", "-y", "--node-options", "--max-old-space-size=512", "@scope/server@1.2.3",
                              "--mode", "local", "/data")
    assert launch.runtime == "npx"


def test_pypi_prefers_uvx_then_pipx():
    package = {"registryType": "pypi", "identifier": "mcp-server-time", "version": "0.6.2",
               "transport": {"type": "stdio"}, "packageArguments": [{"type": "named", "name": "--local-timezone",
                                                                      "value": "UTC"}]}
    uvx = build(_doc(package), "f", environ={}, which=_which("uvx", "pipx"))
    assert uvx.command == ("/bin/uvx", "mcp-server-time==0.6.2", "--local-timezone", "UTC")
    pipx = build(_doc(package), "f", environ={}, which=_which("pipx"))
    assert pipx.command == ("/bin/pipx", "run", "--spec", "mcp-server-time==0.6.2", "mcp-server-time",
                            "--local-timezone", "UTC")


def test_oci_passes_the_declared_variables_by_name_only():
    package = {"registryType": "oci", "identifier": "docker.io/mcp/filesystem:1.0.2", "transport": {"type": "stdio"},
               "runtimeArguments": [{"type": "named", "name": "--mount",
                                     "value": "type=bind,src={source_path},dst={target_path}",
                                     "variables": {"source_path": {"isRequired": True},
                                                   "target_path": {"default": "/project"}}}],
               "packageArguments": [{"type": "positional", "valueHint": "target_dir", "value": "/project"}],
               "environmentVariables": [{"name": "LOG_LEVEL", "default": "info"},
                                        {"name": "API_KEY", "isSecret": True, "isRequired": True}]}
    launch = build(_doc(package), "f", inputs={"source_path": "/home/me"}, environ={"API_KEY": "k-123"},
                   which=_which("docker"))
    assert launch.command == ("/bin/docker", "run", "-i", "--rm", "-e", "LOG_LEVEL", "-e", "API_KEY", "--mount",
                              "type=bind,src=/home/me,dst=/project", "docker.io/mcp/filesystem:1.0.2", "/project")
    assert ("API_KEY", "k-123") in launch.env and "k-123" not in " ".join(launch.command)
    assert launch.secrets == ("k-123",)


def test_nuget_arguments_follow_a_double_dash():
    package = {"registryType": "nuget", "identifier": "Knapcode.SampleMcpServer", "version": "0.4.0-beta",
               "transport": {"type": "stdio"},
               "packageArguments": [{"type": "positional", "value": "mcp"}, {"type": "positional", "value": "start"}]}
    launch = build(_doc(package), "f", environ={}, which=_which("dnx"))
    assert launch.command == ("/bin/dnx", "Knapcode.SampleMcpServer@0.4.0-beta", "--yes", "--", "mcp", "start")


def test_the_first_runnable_package_is_chosen_and_the_others_are_said():
    npm = {"registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"}}
    oci = {"registryType": "oci", "identifier": "img:1", "transport": {"type": "stdio"}}
    launch = build(_doc(npm, oci), "f", environ={}, which=_which("docker"))
    assert launch.published.chosen == "$.packages[1]"
    assert launch.skipped == ("$.packages[0] (npm): npx is not on the PATH (it comes with Node.js)",)


def test_a_remote_when_no_package_runs():
    npm = {"registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"}}
    remote = {"type": "sse", "url": "https://example.com/sse"}
    launch = build(_doc(npm, remotes=(remote,)), "f", environ={}, which=_which())
    assert (launch.url, launch.transport, launch.published.chosen) == ("https://example.com/sse", "sse", "$.remotes[0]")


def test_a_placeholder_without_a_variable_stays_as_written():
    package = {"registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"},
               "packageArguments": [{"type": "positional", "value": "{not_a_variable}"}]}
    assert build(_doc(package), "f", environ={}, which=_which("npx")).command[-1] == "{not_a_variable}"


def test_a_value_outside_the_choices_is_refused():
    package = {"registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"},
               "packageArguments": [{"type": "named", "name": "--mode", "choices": ["local", "proxy"]}]}
    with pytest.raises(UsageProblem, match=r'\$\.packages\[0\]\.packageArguments\[0\]: "cloud" is not one of'):
        build(_doc(package), "f", inputs={"mode": "cloud"}, environ={}, which=_which("npx"))


def test_runtime_arguments_need_the_runtime_they_were_written_for(tmp_path):
    package = {"registryType": "pypi", "identifier": "p", "version": "1", "runtimeHint": "uvx",
               "transport": {"type": "stdio"}, "runtimeArguments": [{"type": "named", "name": "--python",
                                                                      "value": "3.12"}]}
    with pytest.raises(UsageProblem, match=r"\$\.packages\[0\]\.runtimeArguments: runtime arguments are for uvx"):
        build(_doc(package), "f", package=0, environ={}, which=_which("pipx"))


def test_an_installed_console_script_counts_only_at_the_published_version(tmp_path):
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    (site / "weather_mcp-0.5.0.dist-info").mkdir(parents=True)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "weather-mcp").write_text("#!/bin/sh\n")

    def which(name: str) -> str | None:
        return str(tmp_path / "bin" / name) if name == "weather-mcp" else None

    assert serverjson.installed_script("weather-mcp", "0.5.0", which) == str(tmp_path / "bin" / "weather-mcp")
    assert serverjson.installed_script("weather-mcp", "0.6.0", which) is None


@pytest.mark.parametrize(("published", "running", "agree"), [
    ("io.modelcontextprotocol/everything", "mcp-servers/everything", True),
    ("io.github.example/weather", "weather-mcp", True),
    ("io.github.example/weather", "Weather", True),
    ("io.github.example/weather", "fixture-full", False),
    ("io.github.example/weather-mcp", "mcp-server", False),  # generic words do not count
])
def test_names_agree(published, running, agree):
    published_as = Published("f", published, "1.0.0", "$.packages[0]")
    found = identity_findings(published_as, {"name": running, "version": "1.0.0"})
    assert (found == []) is agree


def test_the_line_of_the_entry_that_ran(tmp_path):
    import json

    doc = {"name": "a/b", "description": 'braces { [ and "quotes" ] }', "version": "1",
           "packages": [{"registryType": "npm", "x": [1, {"y": "],"}]}, {"registryType": "pypi"}],
           "remotes": [{"type": "sse", "url": "https://example.com/sse"}]}
    text = json.dumps(doc, indent=2)
    path = tmp_path / "server.json"
    path.write_text(text)
    lines = text.splitlines()
    for chosen, follows in (("$.packages[0]", '"registryType": "npm"'), ("$.packages[1]", '"registryType": "pypi"'),
                            ("$.remotes[0]", '"type": "sse"')):
        line = serverjson.line_of(str(path), chosen)
        assert line is not None and lines[line - 1].strip() == "{" and follows in lines[line], chosen
    assert serverjson.line_of(str(path), "$.packages[2]") is None
    assert serverjson.line_of(str(tmp_path / "gone.json"), "$.packages[0]") is None
    path.write_text(json.dumps(doc))  # one line
    assert serverjson.line_of(str(path), "$.remotes[0]") == 1


# ----- --input names: what the chosen entry knows (mcpprobe.fleet.serverjson_inputs) -----

RICH_PACKAGE = {
    "registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"},
    "runtimeArguments": [{"type": "named", "name": "--max", "default": "1"}],
    "packageArguments": [
        {"type": "positional", "valueHint": "dir", "isRequired": True},
        {"type": "positional", "valueHint": "fixed_hint", "value": "--root={root}",
         "variables": {"root": {"default": "/r"}, "declared_only": {}}},
        {"type": "named", "name": "--mode", "value": "fixed"},
        {"type": "named", "name": "-v"},
        {"type": "positional", "value": "no-hint"},
    ],
    "environmentVariables": [{"name": "API_KEY"}, {"name": "URL", "value": "http://{host}", "variables": {
        "host": {"default": "h"}}}],
}
RICH_REMOTE = {"type": "streamable-http", "url": "http://127.0.0.1:{port}/{path}",
               "variables": {"port": {"isRequired": True}, "path": {"value": "mcp"}},
               "headers": [{"name": "X-Team"}, {"name": "Authorization", "value": "Bearer {token}",
                                                  "variables": {"token": {"isRequired": True}}}]}


class _Recording(serverjson._Values):
    """_Values that notes every name it is asked for: the names `build` looks inputs up by."""

    asked: set[str]

    def given(self, *names: str) -> str | None:
        self.asked.update(name for name in names if name)
        return super().given(*names)


def test_every_name_an_input_is_looked_up_by_is_a_known_name():
    """The check and the lookups must not drift apart: a name `_Values.given` is asked for that
    `entry_names` does not know would make a correct --input a usage error."""
    from mcpprobe.fleet.serverjson_inputs import entry_names

    doc = _doc(RICH_PACKAGE, remotes=(RICH_REMOTE,))
    package, remote = entry_names(RICH_PACKAGE, True), entry_names(RICH_REMOTE, False)
    for build_it, names, required in (
            (lambda v: serverjson._build_package(doc, "f", 0, v, {}, _which("npx")), package, {"dir": "/d"}),
            (lambda v: serverjson._build_remote(doc, "f", 0, v), remote, {"port": "1", "token": "t"})):
        values = _Recording("f", required, {})
        values.asked = set()
        build_it(values)
        assert values.asked and values.asked <= names.inputs
    assert package.inputs == {"max", "--max", "dir", "fixed_hint", "root", "declared_only", "mode", "--mode", "v",
                              "-v", "host"}
    assert package.shown == {"max", "dir", "fixed_hint", "root", "declared_only", "mode", "v", "host"}
    assert package.env == {"API_KEY", "URL"}
    assert remote.inputs == remote.shown == {"port", "path", "X-Team", "Authorization", "token"}
    assert remote.env == frozenset()


@pytest.mark.parametrize("name", ["max", "--max", "dir", "root", "declared_only", "mode", "-v", "host"])
def test_each_known_name_of_a_package_is_accepted(name):
    inputs = {"dir": "/d", name: "x"}
    launch = build(_doc(RICH_PACKAGE), "f", package=0, inputs=inputs, environ={}, which=_which("npx"))
    assert launch.published.chosen == "$.packages[0]"


@pytest.mark.parametrize("name", ["port", "path", "X-Team", "Authorization", "token"])
def test_each_known_name_of_a_remote_is_accepted(name):
    inputs = {"port": "1", "token": "t", name: "2"}
    launch = build(_doc(remotes=(RICH_REMOTE,)), "f", remote=0, inputs=inputs, environ={}, which=_which())
    assert launch.url is not None and launch.url.startswith("http://127.0.0.1:")


def test_an_unknown_name_is_refused_before_a_missing_required_one_is_reported():
    with pytest.raises(UsageProblem) as raised:
        build(_doc(RICH_PACKAGE), "f", inputs={"dri": "/d"}, environ={}, which=_which("npx"))
    assert raised.value.message == (
        "--server-json f: $.packages[0]: --input dri: no input of this package is known by that name; the names "
        "it knows: declared_only, dir, fixed_hint, host, max, mode, root, v; its environment variables, given "
        "with -e NAME=VALUE or the environment: API_KEY, URL")


def test_names_are_case_sensitive_and_an_entry_without_inputs_says_so():
    bare = {"registryType": "npm", "identifier": "a", "version": "1", "transport": {"type": "stdio"}}
    with pytest.raises(UsageProblem, match="it has no argument, header or {variable} that takes a value$"):
        build(_doc(bare), "f", inputs={"x": "1"}, environ={}, which=_which("npx"))
    with pytest.raises(UsageProblem, match="--input DIR: no input"):
        build(_doc(RICH_PACKAGE), "f", inputs={"dir": "/d", "DIR": "/e"}, environ={}, which=_which("npx"))


def test_a_package_that_is_passed_over_is_not_judged_by_its_names():
    """Without --package, the names are those of the entry that is used: the first package this
    machine runs, else the first remote."""
    docker = {"registryType": "oci", "identifier": "img:1", "transport": {"type": "stdio"}}
    launch = build(_doc(RICH_PACKAGE, docker, remotes=(RICH_REMOTE,)), "f", inputs={"port": "1", "token": "t"},
                   environ={}, which=_which())
    assert launch.published.chosen == "$.remotes[0]"
    with pytest.raises(UsageProblem, match=r"\$\.packages\[1\]: --input port: .* \$\.remotes\[0\] knows port "
                                           r"\(--remote 0 chooses it\)"):
        build(_doc(RICH_PACKAGE, docker, remotes=(RICH_REMOTE,)), "f", inputs={"port": "1"}, environ={},
              which=_which("docker"))


def test_a_long_list_of_names_is_cut():
    from mcpprobe.fleet.serverjson_inputs import listed

    assert listed([f"n{i:02}" for i in range(40)]) == ", ".join(f"n{i:02}" for i in range(30)) + " and 10 more"
    assert listed(["b", "a c", "", "d,e"]) == "'', 'a c', b, 'd,e'"


# ----- what runs is what is shown (docs/server-json.md, "What runs is what is shown") -----

from mcpprobe.fleet.serverjson_env import STEERING, identifier_problem, shown_environment, steering  # noqa: E402


def _npm_with_env(*env: dict) -> dict:
    return {"registryType": "npm", "identifier": "@scope/server", "version": "1.2.3", "transport": {"type": "stdio"},
            "environmentVariables": list(env)}


@pytest.mark.parametrize("name", ["NODE_OPTIONS", "npm_config_registry", "NPM_CONFIG_USERCONFIG",
                                  "Npm_Config_Registry", "PIP_INDEX_URL", "UV_DEFAULT_INDEX", "PIPX_DEFAULT_PYTHON",
                                  "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH",
                                  "LD_AUDIT", "DYLD_INSERT_LIBRARIES", "NODE_PATH", "DOTNET_STARTUP_HOOKS",
                                  "NUGET_PACKAGES", "CORECLR_PROFILER_PATH", "DOCKER_HOST", "DOCKER_CONFIG", "PATH",
                                  "HOME", "BASH_ENV", "HTTPS_PROXY", "https_proxy", "NODE_EXTRA_CA_CERTS"])
def test_a_steering_variable_the_file_sets_is_refused_unless_allowed(name):
    doc = _doc(_npm_with_env({"name": name, "value": "/tmp/evil"}))
    with pytest.raises(UsageProblem) as refused:
        build(doc, "f", environ={}, which=_which("npx"))
    message = str(refused.value)
    assert "$.packages[0].environmentVariables[0]" in message
    assert f'{name}="/tmp/evil"' in message and f"--allow-env {name}" in message
    launch = build(doc, "f", environ={}, which=_which("npx"), allow_env=[name])
    assert launch.env == ((name, "/tmp/evil"),)


@pytest.mark.parametrize("name", ["API_KEY", "NODE_ENV", "DEBUG", "LOG_LEVEL", "PYTHONUNBUFFERED", "MODE", "ENV",
                                  "GITHUB_TOKEN", "NO_PROXY"])
def test_an_ordinary_variable_is_not_steering(name):
    assert steering(name) is None
    launch = build(_doc(_npm_with_env({"name": name, "default": "x"})), "f", environ={}, which=_which("npx"))
    assert launch.env == ((name, "x"),)


def test_the_users_own_value_for_a_steering_variable_is_theirs():
    """-e and the user's environment are the user's choice; only the file's value or default is refused."""
    doc = _doc(_npm_with_env({"name": "NODE_OPTIONS", "default": "--require=/tmp/evil.js"}))
    assert build(doc, "f", environ={"NODE_OPTIONS": "--max-old-space-size=64"},
                 which=_which("npx")).env == (("NODE_OPTIONS", "--max-old-space-size=64"),)
    assert build(doc, "f", environ={}, cli_env={"NODE_OPTIONS": "--trace-warnings"},
                 which=_which("npx")).env == (("NODE_OPTIONS", "--trace-warnings"),)
    with pytest.raises(UsageProblem, match="--allow-env NODE_OPTIONS"):
        build(doc, "f", environ={}, which=_which("npx"))  # the default is the file's


def test_every_refused_variable_is_named_at_once_and_a_secret_value_is_not_shown():
    doc = _doc(_npm_with_env({"name": "NODE_OPTIONS", "value": "--require=/x.js"},
                             {"name": "npm_config_registry", "value": "s3cr3t-registry", "isSecret": True}))
    with pytest.raises(UsageProblem) as refused:
        build(doc, "f", environ={}, which=_which("npx"))
    message = str(refused.value)
    assert "--allow-env NODE_OPTIONS --allow-env npm_config_registry" in message
    assert "s3cr3t-registry" not in message and "npm_config_registry=a secret value" in message
    assert "nothing was started" in message


def test_every_steering_rule_says_why():
    assert all(rule.why and (rule.names or rule.prefixes) for rule in STEERING)


@pytest.mark.parametrize("name", ["HARMLESS=1 PATH", "A B", "1ABC", "X-Y", "NAME=", "Ä", "X\n"])
def test_an_environment_name_that_is_not_a_posix_name_is_refused(name):
    doc = {"name": "io.github.example/weather", "description": "d", "version": "1.0.0",
           "packages": [_npm_with_env({"name": name, "value": "/tmp/evil"})]}
    with pytest.raises(UsageProblem, match=r"environmentVariables\[0\]\.name: .* is not an environment variable name"):
        check(doc, "f")


@pytest.mark.parametrize(("registry", "identifier"), [
    ("npm", "--call=touch /tmp/pwned"), ("npm", "-y"), ("npm", ".hidden"), ("npm", "_under"), ("npm", "a b"),
    ("npm", "@scope/--x"), ("npm", "x" * 215), ("pypi", "--spec"), ("pypi", "-x"), ("pypi", "a b"), ("pypi", "x-"),
    ("oci", "--privileged"), ("oci", "-v=/:/host"), ("oci", "Upper/Case"), ("oci", "img name"),
    ("nuget", "--add-source"), ("nuget", "-x"), ("nuget", "a..b"),
])
def test_an_identifier_outside_its_registrys_grammar_is_refused(registry, identifier):
    assert identifier_problem(registry, identifier) is not None
    package = {"registryType": registry, "identifier": identifier, "version": "1.0.0", "transport": {"type": "stdio"}}
    doc = {"name": "io.github.example/weather", "description": "d", "version": "1.0.0", "packages": [package]}
    with pytest.raises(UsageProblem, match=r"\$\.packages\[0\]\.identifier"):
        check(doc, "f")


@pytest.mark.parametrize(("registry", "identifier"), [
    ("npm", "@modelcontextprotocol/server-everything"), ("npm", "JSONStream"), ("npm", "a.b_c-d~e"),
    ("pypi", "mcp-server-time"), ("pypi", "Zope.Interface"), ("pypi", "a"),
    ("oci", "ghcr.io/github/github-mcp-server"), ("oci", "docker.io/library/alpine:3.20"), ("oci", "mcp/time"),
    ("oci", "localhost:5000/a/b@sha256:" + "0" * 64), ("nuget", "Microsoft.Extensions.AI"), ("nuget", "Knapcode.X_Y-Z"),
])
def test_real_identifiers_follow_their_grammar(registry, identifier):
    assert identifier_problem(registry, identifier) is None


@pytest.mark.parametrize("version", ["-1.0.0", "--help", "1.0 0", "1.0\n"])
def test_a_version_that_is_not_one_is_refused(version):
    package = {"registryType": "npm", "identifier": "x", "version": version, "transport": {"type": "stdio"}}
    doc = {"name": "io.github.example/weather", "description": "d", "version": "1.0.0", "packages": [package]}
    with pytest.raises(UsageProblem, match=r"\$\.packages\[0\]\.version"):
        check(doc, "f")


def test_shown_environment_quotes_values_and_masks_secrets():
    assert shown_environment([("A", "1"), ("B", "two words"), ("K", "s3cr3t")], ["K"]) == [
        "A=1", "B='two words'", "K=[redacted]"]
