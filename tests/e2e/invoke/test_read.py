"""`mcpprobe read`: only listed URIs or URIs matching a listed template; text out as it is,
binary only into files or pipes; templates expanded (RFC 6570); resource not found is exit 5.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import fixture_cmd, http_server, recorded, run_cli

from mcpprobe.operations.arguments import expand, matches_template, template_variables
from tests.e2e.invoke.test_call import PY, RUNNER, SDK, invoke, recording, run_on_terminal, sdk_cmd

README = "Fixture readme.\nLine two, with a tab:\tend.\n"


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with http_server([PY, str(SDK), "--http", "0"]) as server_url:
        yield server_url


def test_text_goes_to_stdout_exactly(url):
    code, out, err = invoke(["read", "fixture://readme", url])
    assert code == 0, err
    assert out == README.encode()


def test_blob_is_decoded_into_a_pipe(url):
    code, out, err = invoke(["read", "fixture://data.bin", url])
    assert code == 0, err
    assert out == bytes(range(256)) * 4


def test_blob_into_a_file(url, tmp_path):
    path = tmp_path / "logo.png"
    code, out, err = invoke(["read", "fixture://logo.png", "-o", str(path), url])
    assert code == 0, err
    assert out == b""
    assert path.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert "wrote 73 bytes" in err


def test_several_contents_are_labelled_with_their_uri(url, tmp_path):
    code, out, err = invoke(["read", "fixture://bundle", url])
    assert code == 0
    text = out.decode("latin-1")
    assert "==> fixture://bundle/part1 (text/plain) <==\npart one\n" in text
    assert "==> fixture://bundle/part2 (text/plain) <==\npart two\n" in text
    assert "==> fixture://bundle/logo.png (image/png) <==\n\x89PNG" in text
    directory = tmp_path / "bundle"
    code, out, err = invoke(["read", "fixture://bundle", "-o", str(directory), url])
    assert sorted(p.name for p in directory.iterdir()) == ["logo.png", "part1.txt", "part2.txt"]
    assert (directory / "part2.txt").read_text() == "part two\n"


def test_blob_on_a_terminal_is_summarised(tmp_path):
    status, output = run_on_terminal([*RUNNER, "read", "fixture://logo.png", *sdk_cmd()], None)
    assert status == 0, output
    assert "[blob image/png, 73 bytes; not shown on a terminal" in output
    assert "PNG\r\n" not in output and "IHDR" not in output


def test_json_has_the_request_and_the_raw_result(url):
    result = run_cli(["read", "fixture://logo.png", "--json", url])
    doc = result.json
    assert doc["command"] == "read" and doc["exitCode"] == 0
    assert doc["request"]["method"] == "resources/read"
    assert doc["request"]["params"]["uri"] == "fixture://logo.png"
    assert base64.b64decode(doc["result"]["contents"][0]["blob"]).startswith(b"\x89PNG")
    assert doc["resource"]["mimeType"] == "image/png"
    assert doc["catalog"]["resources"]["pages"] == 2


def test_resource_on_a_later_page_is_found(url):
    code, out, err = invoke(["read", "fixture://notes/extra", url])
    assert code == 0 and out == b"# Extra\n"


# ----- templates -----


def test_template_is_expanded_and_read(url):
    result = run_cli(["read", "--template", "fixture://items/{id}", "id=12", "--json", url])
    assert result.exit_code == 0
    doc = result.json
    assert doc["uri"] == "fixture://items/12"
    assert json.loads(doc["result"]["contents"][0]["text"]) == {"id": 12}
    result = run_cli(["read", "--template", "fixture://search{?q,limit}", "q=a b", "limit=3", "--json", url])
    assert result.json["uri"] == "fixture://search?q=a%20b&limit=3"


def test_uri_matching_a_template_is_accepted(url):
    result = run_cli(["read", "fixture://items/7", "--json", url])
    assert result.exit_code == 0
    assert result.json["resource"]["uriTemplate"] == "fixture://items/{id}"


def test_template_variables_are_checked(url):
    result = run_cli(["read", "--template", "fixture://items/{id}", url])
    assert result.exit_code == 3 and "no value for id" in result.stderr
    result = run_cli(["read", "--template", "fixture://items/{id}", "id=1", "colour=red", url])
    assert result.exit_code == 3 and "no variable 'colour'" in result.stderr
    result = run_cli(["read", "--template", "fixture://things/{id}", "id=1", url])
    assert result.exit_code == 3 and "did you mean 'fixture://items/{id}'" in result.stderr


def test_template_variable_completion(url):
    result = run_cli(["read", "--template", "fixture://items/{id}", "--complete", "id=1", url])
    assert result.exit_code == 0
    assert result.stdout.split() == ["1", "12"]
    result = run_cli(["read", "--template", "fixture://items/{id}", "--complete", "id=", "--json", url])
    assert result.json["completion"]["values"] == ["1", "2", "3", "12", "20"]
    assert result.json["request"]["params"]["ref"] == {"type": "ref/resource", "uri": "fixture://items/{id}"}


def test_rfc6570_expansion():
    values = {"var": "value", "hello": "Hello World!", "path": "/foo/bar", "list": ["red", "green"],
              "keys": {"semi": ";", "dot": "."}, "x": "1024", "y": "768", "empty": ""}
    cases = {
        "{var}": "value", "{hello}": "Hello%20World%21", "{+path}/here": "/foo/bar/here",
        "{#path}": "#/foo/bar", "X{.var}": "X.value", "{/var,x}": "/value/1024", "{;x,y}": ";x=1024;y=768",
        "{?x,y,empty}": "?x=1024&y=768&empty=", "?fixed=yes{&x}": "?fixed=yes&x=1024", "{var:3}": "val",
        "{list}": "red,green", "{list*}": "red,green", "{/list*}": "/red/green", "{?keys*}": "?semi=%3B&dot=.",
        "{?undefined}": "", "{+hello}": "Hello%20World!",
    }
    for template, expected in cases.items():
        assert expand(template, values) == expected, template
    assert template_variables("a{/b,c}{?d}") == ["b", "c", "d"]
    assert template_variables("a{b}{+c}{?d}", required_only=True) == ["b", "c"]
    assert matches_template("fixture://items/3", "fixture://items/{id}")
    assert not matches_template("fixture://items/", "fixture://items/{id}")
    assert not matches_template("fixture://items/3/4", "fixture://items/{id}")
    assert matches_template("fixture://search?q=1", "fixture://search{?q,limit}")
    assert matches_template("fixture://search", "fixture://search{?q,limit}")


# ----- refusals and errors -----


def test_unlisted_uri_is_refused_and_nothing_is_sent(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["read", "fixture://readm", "--json", *recording(record), *sdk_cmd()])
    assert result.exit_code == 3
    assert result.json["error"]["code"] == "not-in-catalog"
    assert result.json["error"]["detail"]["suggestions"][0] == "fixture://readme"
    sent = recorded(record)
    assert "resources/list" in sent and "resources/templates/list" in sent
    assert "resources/read" not in sent


def test_an_unlisted_uri_on_a_server_without_templates_is_looked_for_in_a_whole_catalog():
    """Templates answered with -32601 (an optional part, none of them): the resources are the whole
    catalog, so the refusal does not say the URI may be on a page not read, and no error is found."""
    result = run_cli(["read", "fixture://readm", "--json", "--", *fixture_cmd("no-templates")])
    assert result.exit_code == 3
    error = result.json["error"]
    assert error["code"] == "not-in-catalog" and "may be elsewhere" not in error["message"]
    assert [f["code"] for f in result.json["findings"] if f["severity"] == "error"] == ["not-in-catalog"]


@pytest.mark.parametrize("protocol, rpc_code", [("legacy", -32002), ("modern", -32602)])
def test_resource_not_found_is_exit_5(url, protocol, rpc_code):
    result = run_cli(["read", "fixture://items/99x", "--protocol", protocol, "--json", url])
    assert result.exit_code == 5
    doc = result.json
    assert doc["error"]["code"] == "resource-not-found"
    assert doc["error"]["detail"]["rpcCode"] == rpc_code
    assert doc["error"]["message"].startswith("resource not found: fixture://items/99x")
    human = run_cli(["read", "fixture://nowhere", "--force", "--protocol", protocol, url])
    assert human.exit_code == 5
    assert "resource not found: fixture://nowhere" in human.stderr


def test_undeclared_resources_capability_is_refused(tmp_path):
    record = tmp_path / "record.jsonl"
    result = run_cli(["read", "file:///x", "--env", f"FIXTURE_RECORD={record}", "--", *fixture_cmd("tools-only")])
    assert result.exit_code == 3
    assert "needs the 'resources' capability" in result.stderr
    assert not {"resources/list", "resources/read"} & set(recorded(record))


def test_usage_errors():
    assert invoke(["read", "--", PY, str(SDK)])[0] == 2
    code, _, err = invoke(["read", "fixture://readme", "id=1", "--", PY, str(SDK)])
    assert code == 2 and "go with --template" in err


# ----- server-everything -----


@pytest.mark.interop
def test_everything_dynamic_template(everything, tmp_path):
    node = ["--", "node", str(everything)]
    result = run_cli(["read", "--template", "demo://resource/dynamic/text/{resourceId}", "resourceId=3", *node])
    assert result.exit_code == 0 and result.stdout.startswith("Resource 3:")
    path = tmp_path / "blob.bin"
    result = run_cli(["read", "demo://resource/dynamic/blob/2", "-o", str(path), *node])
    assert result.exit_code == 0 and path.stat().st_size > 0
    assert Path(path).read_bytes() != b""
