"""Execute every notebook in notebooks/ (kernel python3, working directory = the repo root).

A notebook fails the test when any of its cells raises (each notebook ends with cheap assertions).
The committed notebooks carry their outputs (figures visible in the repository; refreshed by
``python .ci/render_notebooks.py``): every cell that draws a figure when executed here must have
one committed. The execution's outputs are not written back by the test.
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
    committed = figures(nbformat.read(path, as_version=4))
    client.execute()      # raises CellExecutionError (with the cell and the traceback) when a cell fails
    errors = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    drawn = figures(nb)
    assert drawn, "the notebook draws no figure"
    assert committed == drawn, (f"{path.name}: figures committed in cells {committed}, drawn in cells {drawn}: "
                                "run python .ci/render_notebooks.py and commit the notebook")


def figures(nb) -> list[int]:
    """Indices of the cells with an image output."""
    return [k for k, cell in enumerate(nb.cells) if cell.cell_type == "code"
            and any("image/png" in o.get("data", {}) for o in cell.get("outputs", []))]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_finds_its_files_from_notebooks_dir(path):
    """Jupyter started as ``jupyter lab notebooks/`` runs a notebook in ``notebooks/``: first_robot.ipynb
    failed there with ``FileNotFoundError: robots/planar_3rpr.toml``. The cells up to the last one that
    names a file of the repository (``robots/…``) run with that working directory (the rest is the
    full run's, above)."""
    nb = nbformat.read(path, as_version=4)
    code = [k for k, cell in enumerate(nb.cells) if cell.cell_type == "code"]
    naming = [k for k in code if "robots" in nb.cells[k].source]
    assert naming, f"{path.name} names no robot file"
    nb.cells = nb.cells[:naming[-1] + 1]
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(ROOT / "notebooks")}})
    client.execute()      # raises CellExecutionError when a cell fails


def test_readme_says_how_to_run_the_notebooks():
    text = (ROOT / "README.md").read_text()
    assert "jupyter lab notebooks/" in text and "jupyter nbconvert --to notebook --execute" in text
