"""The wire: JSON-RPC over stdio, streamable HTTP and legacy HTTP+SSE.

mcpprobe reads the server's raw messages itself instead of going through the SDK's typed
`ClientSession`: a diagnostic tool has to see every byte a broken server sends (a non-JSON line,
a malformed item, a response to nothing), keep going after it, and say what it was. The SDK's
types still decide what is valid (`mcpprobe.safety.schema`).
"""
