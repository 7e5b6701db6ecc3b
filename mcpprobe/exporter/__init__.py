"""`mcpprobe exporter`: Prometheus schedules the probes, one `/probe?target=NAME` per scrape.

The blackbox exporter's multi-target pattern (docs/exporter.md): targets are names from the
configs mcpprobe already reads, modules say what a check does, and the exporter bounds and spaces
the work so that several Prometheus replicas do not multiply the load on a server.
"""
