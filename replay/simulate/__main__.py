"""``python -m replay.simulate``: the same as ``replay simulate``."""

from replay.simulate.cli import main

raise SystemExit(main())
