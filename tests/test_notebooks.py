"""Execute every notebook in notebooks/ (kernel python3, working directory = the repo root).

A notebook fails the test when any of its cells raises (each notebook ends with cheap assertions).
Outputs are not written back: the committed notebooks stay output-free.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))

try:       # the `test` extra installs them: python -m pip install -e ".[test]"
    import ipykernel  # noqa: F401  (provides the python3 kernel)
    import nbclient
    import nbformat
except ImportError as exc:  # fail, not skip: a missing dependency must not pass silently
    raise ImportError(f"{exc}; install the test dependencies: python -m pip install -e '.[test]'") from None


def test_there_are_notebooks():
    assert {p.name for p in NOTEBOOKS} >= {"delta_paper_motion.ipynb", "irsbot2_pick_place.ipynb"}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT)}})
    client.execute()      # raises CellExecutionError (with the cell and the traceback) when a cell fails
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
