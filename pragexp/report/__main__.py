"""python -m pragexp.report ..."""

import sys

from pragexp.report.cli import main

sys.exit(main())
