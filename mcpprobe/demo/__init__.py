"""The bundled demo MCP server (``mcpprobe-demo``).

A small, self-contained "notes" server built on the official MCP Python SDK's
low-level ``Server``. It exists so that ``mcpprobe probe -- mcpprobe-demo``
works offline, with no Node.js, and exercises pagination, structured output,
annotations, images, errors, resources, templates, prompts and completions.
"""
