"""The failure of a command, said on one line (light: `cli.main` imports it
for every command, `replay validate` included)."""


class CommandError(Exception):
    """A command that cannot go on: `cli.main` writes ``replay COMMAND: message``
    to stderr and exits with `code`."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code
