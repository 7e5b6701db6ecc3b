"""The console script's exit (mcpprobe.launch.leave): once the run is over, the process ends without
the interpreter's teardown, yet with everything the ordinary exit would keep: the exit code, every
byte of output, the threads it would wait for, the atexit callbacks; and it keeps the ordinary
exit where the fast one would lose something (a code that is a message)."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import FIXTURE, PY, ROOT

# An object whose finalizer speaks when the interpreter tears the module down: silent when the
# process ended at once.
TEARDOWN = ("import atexit, sys\n"
            "class Teardown:\n"
            "    def __del__(self):\n"
            "        sys.__stderr__.write('TEARDOWN\\n')\n"
            "keep = Teardown()\n"
            "atexit.register(lambda: print('ATEXIT', flush=False))\n")


def _run(code: str, args: list[str]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PYTHONUNBUFFERED", None)  # stdout is a pipe: block-buffered, so a lost flush would show
    env.pop("_MCPPROBE_COMPLETE", None)
    return subprocess.run([PY, "-c", code, *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)


def test_a_probe_ends_without_teardown_and_loses_nothing():
    done = _run(TEARDOWN + "from mcpprobe.launch import main\nmain()\n",
                ["probe", "--json", "--", PY, str(FIXTURE), "full"])
    document, _, rest = done.stdout.partition("\n")
    assert json.loads(document)["command"] == "probe"
    assert done.returncode == json.loads(document)["exitCode"]
    assert rest == "ATEXIT\n"  # the callbacks ran, and what they printed was flushed
    assert "TEARDOWN" not in done.stderr


def test_the_exit_code_of_a_usage_error_is_kept():
    done = _run(TEARDOWN + "from mcpprobe.launch import main\nmain()\n", ["probe", "--timeout", "soon"])
    assert done.returncode == 2
    assert "Invalid value" in done.stderr and "TEARDOWN" not in done.stderr
    assert done.stdout == "ATEXIT\n"


def test_a_running_thread_is_waited_for():
    # The interpreter waits for a non-daemon thread; ending the process at once would cut it short.
    code = (TEARDOWN + "import threading, time\n"
            "threading.Thread(target=lambda: (time.sleep(0.5), print('THREAD DONE'))).start()\n"
            "from mcpprobe.launch import main\nmain()\n")
    done = _run(code, ["--version"])
    assert done.returncode == 0
    assert done.stdout.splitlines()[1:] == ["THREAD DONE", "ATEXIT"]
    assert "TEARDOWN" not in done.stderr


def test_a_message_as_exit_code_keeps_the_ordinary_exit():
    code = (TEARDOWN + "from mcpprobe import launch\n"
            "def run(args):\n    raise SystemExit('a message')\n"
            "launch.run = run\nlaunch.main()\n")
    done = _run(code, [])
    assert done.returncode == 1
    assert "a message" in done.stderr and "TEARDOWN" in done.stderr
