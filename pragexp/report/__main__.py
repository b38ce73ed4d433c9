"""python -m pragexp.report ..."""

from pragexp.report.cli import main

raise SystemExit(main())
