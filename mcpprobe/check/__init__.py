"""`mcpprobe check`: behaviour checks tied to the specification's words, gated on what the server declared.

A layer above `mcpprobe.operations.probe` and below the CLI and the renderers: nothing here prints, and
nothing imports click or rich.

- `catalogue`: every check as data (`Check` rows) and the `FAMILIES` table, module by family.
- `context`: what a check function gets (`CheckContext`: requests that record their evidence, the
  listings shared by every check) and returns (`Verdict`).
- `runner`: the gate (revision, transport, `--unsafe`, declared capability) and the operation.
- one module per family (`lifecycle`, `listing`, `reading`, `optional`, `http`, `auth`,
  `portability`), each with an `IMPLEMENTS` table: check id -> async function. `http` sends raw
  HTTP requests beside the connection's; `auth` judges the diagnosis of a 401, which stops the
  connection before any session exists (`runner.auth_results`).
- `streams`, `param_headers`: more checks of the `http` family, those that read whole event streams
  (several at once, priming, resumption) and x-mcp-header's server side; the runner loads them beside
  the family modules (`Family.more` in the catalogue).
- `suite` (`--suite-fixtures`): the conformance suite's fixtures; its 2026-07-28 input-required-result
  scenarios are in `suite_mrtr`, and `suite_gate` is the gate both share (the flag, the fixture listed).

A new family is one module with its `IMPLEMENTS` table, its rows in `catalogue.CHECKS` and one
row in `catalogue.FAMILIES`; `mcpprobe/check/docs.py` writes its page (docs/checks/FAMILY.md).
"""
