"""`mcpprobe load`: latency, throughput and soak on the same connect core as every other command.

- `work`: the operations and their weights, checked as their own commands check them;
- `schedule`: closed loop (--concurrency) or open loop (--rate), with no coordinated omission;
- `histogram`: a log-linear histogram of bounded memory and bounded relative error;
- `sampler`: a stdio server's memory, descriptors and threads, and the leak finding;
- `slo`: --slo objectives;
- `run`: the operation.

Below the command line and the renderers, above mcpprobe.operations.probe: nothing here prints.
"""
