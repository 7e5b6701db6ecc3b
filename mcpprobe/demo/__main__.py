"""Allow ``python -m mcpprobe.demo``."""

from mcpprobe.demo.server import main

if __name__ == "__main__":
    raise SystemExit(main())
