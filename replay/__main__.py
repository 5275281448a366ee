"""``python -m replay``: the `replay` command.

The one import of `replay` from the layer above it: the command line lives
in the `cli` package (the composition root), and this entry point only
hands over to it.
"""

from cli.main import run

if __name__ == "__main__":  # not when a spawned worker imports it as __mp_main__
    run()
