"""The `replay` command line, and the composition root of the commands.

`cli.main` builds the parser and runs a command; each command group has a
module of its own holding its parser and its command body (`validate`,
`ingest`, `simulate`, `analyze`, `export`, `serve`, `audit`, `insights`),
and `common` holds what they share. This is the one package that may import
`replay`, `reports` and `api` together: it wires the store's after-commit
subscribers (`reports.derived`) and the ingest's revalidator before a
command that writes the store runs.
"""
