import sys

from workbench.cli.commands import main

sys.exit(main())
