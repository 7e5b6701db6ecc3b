"""`mcpprobe tap`: sit between a host and its server, relay every byte untouched, record and judge both sides.

- `relay`: the stdio relay (the server's process, its pipes, signals); it copies bytes first and hands a
  copy to the observer without ever waiting for it;
- `frames`: the copies cut back into messages (lines), bounded in memory;
- `record`: one JSON Lines entry per message or connection event, masked and cut; reading one back;
- `judge`: the rules, for the server and for the client, over the entries of a record;
- `observer`: the thread that turns the relay's copies into entries, records, judges and logs them;
- `report`: the findings and the live view as text (human, JSON, SARIF, JUnit).

Nothing here prints on stdout: stdout belongs to the server's messages.
"""
