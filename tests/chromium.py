"""Headless Chromium driven over the DevTools protocol, for tests of the HTML report.

Chromium speaks the protocol over a pipe (`--remote-debugging-pipe`: it reads commands on file
descriptor 3 and writes answers and events on 4, each a JSON text ended by NUL), so no WebSocket
library and no TCP port are needed. Debian's package is `chromium`; without it these tests skip.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import queue
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TIMEOUT = 60.0  # per command: generous, for a loaded 2-core machine

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--disable-extensions", "--disable-default-apps", "--mute-audio",
         "--remote-debugging-pipe"]


def executable() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@dataclass
class Visit:
    """What happened while a page was shown."""

    console: list[dict[str, Any]] = field(default_factory=list)  # Runtime.consoleAPICalled
    exceptions: list[dict[str, Any]] = field(default_factory=list)  # Runtime.exceptionThrown
    log: list[dict[str, Any]] = field(default_factory=list)  # Log.entryAdded (CSP violations land here)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for, itself included
    values: dict[str, Any] = field(default_factory=dict)
    screenshot: bytes = b""

    def errors(self) -> list[str]:
        """Every console error, uncaught exception and error-level log entry, as text."""
        out = [" ".join(str(a.get("value", a.get("description", ""))) for a in c.get("args", []))
               for c in self.console if c.get("type") in ("error", "assert")]
        out += [e.get("exceptionDetails", {}).get("text", "exception") for e in self.exceptions]
        out += [f"{e['entry'].get('source')}: {e['entry'].get('text')}" for e in self.log
                if e["entry"].get("level") == "error"]
        return out


class Browser:
    def __init__(self, binary: str, *extra_flags: str) -> None:
        self._profile = tempfile.mkdtemp(prefix="mcpprobe-chromium-")
        to_child_r, self._to_child = os.pipe()
        self._from_child, from_child_w = os.pipe()
        # Above 10, so that moving them to 3 and 4 in the child cannot overwrite one another.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_child_r, from_child_w)]
        for fd in (to_child_r, from_child_w):
            os.close(fd)

        def to_3_and_4() -> None:
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        self._process = subprocess.Popen(
            [binary, *FLAGS, *extra_flags, f"--user-data-dir={self._profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            # close_fds would close 3 and 4 after preexec_fn; Python's own descriptors are not
            # inheritable anyway, and the two pipe ends above are close-on-exec.
            close_fds=False, preexec_fn=to_3_and_4)
        for fd in high:
            os.close(fd)
        self._next_id = 0
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self._events: queue.Queue[dict[str, Any]] = queue.Queue()
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        buffer = b""
        with os.fdopen(self._from_child, "rb", buffering=0) as stream:
            while chunk := stream.read(65536):
                buffer += chunk
                *messages, buffer = buffer.split(b"\0")
                for raw in messages:
                    message = json.loads(raw)
                    if "id" in message:
                        with self._lock:
                            box = self._answers.get(message["id"])
                        if box is not None:
                            box.put(message)
                    else:
                        self._events.put(message)

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        with self._lock:
            self._next_id += 1
            ident = self._next_id
            box: queue.Queue[dict[str, Any]] = queue.Queue()
            self._answers[ident] = box
        message: dict[str, Any] = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_child, json.dumps(message).encode() + b"\0")
        try:
            answer = box.get(timeout=TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"chromium did not answer {method} within {TIMEOUT:.0f} s") from None
        if "error" in answer:
            raise AssertionError(f"{method}: {answer['error']}")
        return answer.get("result", {})

    def _wait_for(self, method: str, visit: Visit) -> None:
        while True:
            try:
                event = self._events.get(timeout=TIMEOUT)
            except queue.Empty:
                raise AssertionError(f"chromium sent no {method} within {TIMEOUT:.0f} s") from None
            self._record(event, visit)
            if event.get("method") == method:
                return

    def _drain(self, visit: Visit) -> None:
        while True:
            try:
                self._record(self._events.get_nowait(), visit)
            except queue.Empty:
                return

    @staticmethod
    def _record(event: dict[str, Any], visit: Visit) -> None:
        method, params = event.get("method"), event.get("params", {})
        if method == "Runtime.consoleAPICalled":
            visit.console.append(params)
        elif method == "Runtime.exceptionThrown":
            visit.exceptions.append(params)
        elif method == "Log.entryAdded":
            visit.log.append(params)
        elif method == "Network.requestWillBeSent":
            visit.requests.append(params["request"]["url"])

    def visit(self, path: Path, *, width: int, height: int = 900, mobile: bool = False, dark: bool = False,
              measure: dict[str, str] | None = None, clip: tuple[int, int] | None = None) -> Visit:
        """Open `path` in a fresh tab at this viewport, evaluate `measure` (name -> expression) and
        take a screenshot: of the whole page, or of `clip` (top, height) at the page's width."""
        visit = Visit()
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        try:
            for domain in ("Page", "Runtime", "Log", "Network"):
                self.send(f"{domain}.enable", session=session)
            self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                             "deviceScaleFactor": 1, "mobile": mobile},
                      session=session)
            self.send("Emulation.setEmulatedMedia",
                      {"features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]},
                      session=session)
            self.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
            self._wait_for("Page.loadEventFired", visit)
            for name, expression in (measure or {}).items():
                result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                                   session=session)
                visit.values[name] = result["result"].get("value")
            options: dict[str, Any] = {"format": "png", "captureBeyondViewport": True}
            if clip is not None:
                options["clip"] = {"x": 0, "y": clip[0], "width": width, "height": clip[1], "scale": 1}
            shot = self.send("Page.captureScreenshot", options, session=session)
            visit.screenshot = base64.b64decode(shot["data"])
            self._drain(visit)
        finally:
            self.send("Target.closeTarget", {"targetId": target})
        return visit

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):  # it may be gone already
            self.send("Browser.close")
        try:
            self._process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        os.close(self._to_child)
        shutil.rmtree(self._profile, ignore_errors=True)
