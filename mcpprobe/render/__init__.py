"""Renderers: an Outcome in, text out. They never talk to a server and never choose exit codes."""
