"""Is `mcpprobe load`'s memory flat? The same open-loop rate for a short and a long run, side by side:
the client's own peak resident set (its ru_maxrss, read at its exit, children excluded) and what
`/usr/bin/time -v` reports for the whole tree (the largest process in it, often the server), plus the
server's resident set at the end of the run (the load's own server samples).

    python bench/load_memory.py --everything PATH/dist/index.js [--rate 500] [--short 10] [--long 60]

Target (issue 26): the client's peak within 10 % between the two runs.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The client under test, which prints its own peak resident set on stderr as it exits.
SELF_RSS = ("import atexit, resource, runpy, sys\n"
            "atexit.register(lambda: print('SELF_MAXRSS_KB', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
            " file=sys.stderr))\n"
            "sys.argv = ['mcpprobe', *sys.argv[1:]]\n"
            "runpy.run_module('mcpprobe', run_name='__main__')\n")


def run(everything: str, rate: float, seconds: float) -> dict[str, float]:
    done = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", SELF_RSS, "load", "--json", "--call",
                           "get-sum a=1 b=2", "--rate", str(rate), "--concurrency", "10", "--duration",
                           str(seconds), "--", "node", everything],
                          capture_output=True, text=True, timeout=seconds * 3 + 120, cwd=HERE.parent)
    doc = json.loads(done.stdout)
    own = re.search(r"SELF_MAXRSS_KB (\d+)", done.stderr)
    tree = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    samples = [s for s in doc.get("serverSamples") or [] if isinstance(s, dict)]
    return {"requests": doc["overall"]["requests"], "clientMaxRssMB": int(own[1]) / 1024 if own else 0.0,
            "timeMaxRssMB": int(tree[1]) / 1024 if tree else 0.0,
            "serverRssEndMB": samples[-1]["rssBytes"] / 2**20 if samples and "rssBytes" in samples[-1] else 0.0}


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--everything", required=True, help="server-everything's dist/index.js")
    parser.add_argument("--rate", type=float, default=500)
    parser.add_argument("--short", type=float, default=10)
    parser.add_argument("--long", type=float, default=60)
    opts = parser.parse_args()
    short, long = run(opts.everything, opts.rate, opts.short), run(opts.everything, opts.rate, opts.long)
    for name, figures in ((f"{opts.short:g} s", short), (f"{opts.long:g} s", long)):
        print(f"{name:6} {figures['requests']:7.0f} requests  client peak {figures['clientMaxRssMB']:6.1f} MB  "
              f"time -v {figures['timeMaxRssMB']:6.1f} MB  server at the end {figures['serverRssEndMB']:6.1f} MB")
    print(f"client peak {long['clientMaxRssMB'] / short['clientMaxRssMB']:.3f}x from the short run to the long one "
          "(target within 10 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
