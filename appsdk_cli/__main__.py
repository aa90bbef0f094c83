from appsdk_cli.cli import main

main()
