from fxcache_cli.app import main

main()
