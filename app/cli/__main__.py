"""`python -m app.cli`: the folio commands without the launcher."""

import sys

from app.cli.commands import main

sys.exit(main())
