"""``python -m pkm`` runs the command-line interface."""

from pkm.cli.main import run

run()
