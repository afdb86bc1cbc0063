from aintern.cli import main

main()
