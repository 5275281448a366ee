"""``python -m replay.simulate``: the same as ``replay simulate``.

An entry point only: it hands over to the command line in `cli.simulate`
(the layer above `replay`, as `python -m replay` does).
"""

from cli.simulate import main

raise SystemExit(main())
