"""`load --merge`: the documents of several real load runs against one HTTP server combined into one,
whose percentiles are those of every request of every run pooled; and `--start-at`, which lets the
runs begin together. Mismatched runs are refused (exit 2) naming the field."""

from __future__ import annotations

import json
import math
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from mcpprobe.load.histogram import LAYOUT, bounds_of, bucket_of
from tests.conftest import PY, ROOT, checked, fixture_http, run_cli


def _workers(url: str, tmp_path: Path, count: int, *extra: str) -> list[Path]:
    """`count` load runs as separate processes, begun together by --start-at; their documents."""
    start = time.time() + 3
    files = [tmp_path / f"worker-{i}.json" for i in range(count)]
    processes = []
    for path in files:
        argv = [PY, "-m", "mcpprobe", "load", "--json", "--list", "tools", "--requests", "60", "--concurrency", "2",
                "--protocol", "legacy", "--start-at", f"{start:.3f}", *extra, url]
        processes.append(subprocess.Popen(argv, stdout=path.open("w"), stderr=subprocess.PIPE, text=True, cwd=ROOT))
    for process in processes:
        _, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
    for path in files:
        doc = checked(json.loads(path.read_text()))
        assert doc["settings"]["startAt"] == pytest.approx(start, abs=0.001)
        assert doc["clock"]["startedAt"] >= start - 0.01, "a worker began before --start-at"
    return files


def _pooled(documents: list[dict[str, Any]]) -> list[int]:
    """Every request of every run, each as its bucket's lowest value, sorted: the pooled population at
    the layout's resolution (a run's document keeps its buckets, not each latency)."""
    values: list[int] = []
    for doc in documents:
        for bucket in doc["histogram"]["buckets"]:
            values += [bucket["fromUs"]] * bucket["count"]
    return sorted(values)


def _same_bucket(a: int, b: int) -> bool:
    return bucket_of(a) == bucket_of(b) or abs(bucket_of(a) - bucket_of(b)) <= 1


def test_four_workers_merge_into_the_pooled_percentiles(tmp_path: Path) -> None:
    with fixture_http("full") as url:
        files = _workers(url, tmp_path, 4, "--slo", "errors<=0")
    documents = [json.loads(path.read_text()) for path in files]
    result = run_cli(["load", "--merge", "--json", *map(str, files)])
    assert result.exit_code == 0, result.stderr
    merged = checked(result.json)
    assert merged["merged"]["runs"] == 4 and [w["file"] for w in merged["merged"]["workers"]] == list(map(str, files))
    assert merged["histogram"]["layout"] == LAYOUT
    overall = merged["overall"]
    assert overall["requests"] == sum(d["overall"]["requests"] for d in documents) == 240
    assert overall["ok"] == 240 and overall["errors"] == 0
    assert sum(b["count"] for b in merged["histogram"]["buckets"]) == 240
    pooled = _pooled(documents)
    for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        nearest_rank = pooled[math.ceil(q * len(pooled)) - 1]
        assert _same_bucket(overall["latencyUs"][key], nearest_rank), (key, overall["latencyUs"][key], nearest_rank)
    assert overall["latencyUs"]["min"] == min(d["overall"]["latencyUs"]["min"] for d in documents)
    assert overall["latencyUs"]["max"] == max(d["overall"]["latencyUs"]["max"] for d in documents)
    window = max(d["clock"]["endedAt"] for d in documents) - min(d["clock"]["startedAt"] for d in documents)
    assert overall["throughput"] == pytest.approx(240 / window, rel=0.01)
    assert merged["slos"] == [{**merged["slos"][0], "slo": "errors<=0", "met": True}]
    (operation,) = merged["operations"]
    assert operation["operation"] == "list tools" and operation["requests"] == 240
    assert operation["latencyUs"]["p99"] == overall["latencyUs"]["p99"]
    human = run_cli(["load", "--merge", *map(str, files)])
    assert human.exit_code == 0 and "Merged 4 runs" in " ".join(human.stdout.split())
    assert all(path.name in human.stdout for path in files)


def _tampered(source: Path, target: Path, change: Any) -> Path:
    doc = json.loads(source.read_text())
    change(doc)
    target.write_text(json.dumps(doc))
    return target


def test_runs_that_do_not_measure_the_same_thing_are_refused_naming_the_field(tmp_path: Path) -> None:
    with fixture_http("full") as url:
        a, b = _workers(url, tmp_path, 2)
        prompts = tmp_path / "prompts.json"
        run = run_cli(["load", "--json", "--list", "prompts", "--requests", "5", "--protocol", "legacy", url])
        prompts.write_text(run.stdout)
    cases = {
        "settings.operations": prompts,
        "target": _tampered(b, tmp_path / "other.json", lambda d: d.update(target="http://127.0.0.1:1/mcp")),
        "histogram.layout": _tampered(b, tmp_path / "layout.json", lambda d: d["histogram"].update(layout="x")),
        "clock.startedAt": _tampered(b, tmp_path / "old.json", lambda d: d["clock"].pop("startedAt")),
    }
    for field, other in cases.items():
        refused = run_cli(["load", "--merge", str(a), str(other)])
        assert refused.exit_code == 2 and field in refused.stderr, (field, refused.stderr)
        assert refused.stdout == ""
    probe = tmp_path / "probe.json"
    probe.write_text(run_cli(["probe", "--json", "--", PY, "-c", "pass"]).stdout or "{}")
    assert run_cli(["load", "--merge", str(a), str(probe)]).exit_code == 2
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    not_json = run_cli(["load", "--merge", str(a), str(broken)])
    assert not_json.exit_code == 2 and "not JSON" in not_json.stderr
    assert run_cli(["load", "--merge", str(a)]).exit_code == 2  # one document is nothing to merge
    work = run_cli(["load", "--merge", "--list", "tools", str(a), str(b)])
    assert work.exit_code == 2 and "no server or work" in work.stderr


def test_a_bucket_outside_the_layout_is_refused(tmp_path: Path) -> None:
    low, high = bounds_of(300)
    doc = {"command": "load", "overall": {"requests": 1, "latencyUs": {}}, "operations": [],
           "clock": {"startedAt": 1.0, "endedAt": 2.0},
           "histogram": {"layout": LAYOUT, "buckets": [{"fromUs": low, "toUs": high + 1, "count": 1}]}}
    for name in ("a.json", "b.json"):
        (tmp_path / name).write_text(json.dumps(doc))
    refused = run_cli(["load", "--merge", str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    assert refused.exit_code == 2 and "layout" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.parametrize("value", ["tomorrow", "2026-12-04T05:00:00", "nan", "4102444800"])  # the last: year 2100
def test_start_at_takes_a_zoned_time_within_a_day(value: str) -> None:
    result = run_cli(["load", "--list", "tools", "--start-at", value, "--", PY, "-c", "pass"])
    assert result.exit_code == 2 and "--start-at" in result.stderr


def test_the_documented_indexed_job_runs_workers_whose_documents_merge(tmp_path: Path) -> None:
    """docs/load-job.yaml is a valid Kubernetes Indexed Job whose worker command, run here by sh as a
    pod would run it (a shorter duration, a local server, /results a temporary directory), writes
    documents that `load --merge` takes."""
    import os
    import re

    import yaml

    documents = list(yaml.safe_load_all((ROOT / "docs" / "load-job.yaml").read_text()))
    (job,) = [d for d in documents if d["kind"] == "Job"]
    assert job["apiVersion"] == "batch/v1" and job["spec"]["completionMode"] == "Indexed"
    claims = {d["metadata"]["name"] for d in documents if d["kind"] == "PersistentVolumeClaim"}
    pod = job["spec"]["template"]["spec"]
    assert {v["persistentVolumeClaim"]["claimName"] for v in pod["volumes"]} <= claims
    (container,) = pod["containers"]
    assert "--metrics-listen 0.0.0.0:9464" in " ".join(container["args"])  # the port the pods expose
    script = (" ".join(container["args"]).replace("--duration 60", "--requests 20").replace("/results", str(tmp_path))
              .replace("--metrics-listen 0.0.0.0:9464", "--metrics-listen 127.0.0.1:0 --metrics-linger 0"))
    script = re.sub(r"^mcpprobe ", f"{PY} -m mcpprobe ", script)
    with fixture_http("full") as url:
        for index in range(2):
            env = {**os.environ, "MCP_URL": url, "START_AT": f"{time.time():.3f}", "JOB_COMPLETION_INDEX": str(index)}
            done = subprocess.run(["sh", "-c", script], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
    merged = run_cli(["load", "--merge", "--json", str(tmp_path / "worker-0.json"), str(tmp_path / "worker-1.json")])
    assert merged.exit_code == 0 and merged.json["overall"]["requests"] == 40


def test_the_documented_ci_matrix_runs_workers_whose_documents_merge(tmp_path: Path) -> None:
    """docs/load-ci-matrix.yml is a GitHub Actions workflow whose load job is a matrix and whose merge job
    needs it; its `mcpprobe` steps, run here by sh in one directory as the jobs would run them (a
    shorter run, a local server), write documents that its merge step combines."""
    import os

    import yaml

    workflow = yaml.safe_load((ROOT / "docs" / "load-ci-matrix.yml").read_text())
    load_job, merge_job = workflow["jobs"]["load"], workflow["jobs"]["merge"]
    workers = load_job["strategy"]["matrix"]["worker"]
    assert merge_job["needs"] == "load" and len(workers) > 1
    run_steps = [step for step in load_job["steps"] if "mcpprobe load" in step.get("run", "")]
    merge_steps = [step["run"] for step in merge_job["steps"] if "mcpprobe load --merge" in step.get("run", "")]
    assert len(run_steps) == 1 and merge_steps

    def sh(script: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
        script = script.replace("mcpprobe ", f"{PY} -m mcpprobe ", 1).replace("--duration 60", "--requests 10")
        return subprocess.run(["sh", "-c", script], env={**os.environ, **env}, cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    with fixture_http("full") as url:
        for worker in workers[:2]:
            step = run_steps[0]
            env = {"MCP_URL": url, **{k: v.replace("${{ matrix.worker }}", str(worker))
                                      for k, v in step.get("env", {}).items()}}
            done = sh(step["run"], env)
            assert done.returncode == 0, done.stderr
    for script in merge_steps:
        done = sh(script, {})
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "load.html").read_text().startswith("<!DOCTYPE html>")
