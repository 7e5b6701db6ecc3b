from mcpprobe.cli import main

main()
