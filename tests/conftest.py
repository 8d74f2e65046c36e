"""Shared test helpers: paths to the repository's robot files."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROBOTS = ROOT / "robots"
TESTS = Path(__file__).resolve().parent

# make `from conftest import ROBOTS` work from test modules
sys.path.insert(0, str(TESTS))
