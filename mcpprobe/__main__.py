from mcpprobe.launch import main

main()
