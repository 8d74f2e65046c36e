"""``pkm --version``."""
from __future__ import annotations

import argparse


def version() -> str:
    """pkm's version: the installed distribution's, else the one in the checkout's pyproject.toml."""
    from importlib.metadata import PackageNotFoundError, version as installed

    try:
        return installed("pkm")
    except PackageNotFoundError:
        import re
        from pathlib import Path

        text = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
        return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


class Version(argparse.Action):
    """``--version``, the distribution's metadata read only when asked for."""

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"pkm {version()}")
        parser.exit(0)
