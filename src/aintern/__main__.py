import os
import sys

# `python -m aintern` puts the current folder first on sys.path, and aintern runs inside code trees: a
# project's own http/ or json/ package would shadow the standard library's (Django's does). The
# package is imported already, so the folder is not needed (PYTHONSAFEPATH=1 does the same).
if sys.path and sys.path[0] in ("", os.getcwd()):
    del sys.path[0]

from aintern.cli import main

main()
