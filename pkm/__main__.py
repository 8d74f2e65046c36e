"""``python -m pkm`` runs the command-line interface."""

from pkm.cli import run

run()
