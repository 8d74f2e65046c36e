#!/usr/bin/env python3
"""Execute the notebooks in notebooks/ and write their outputs (figures, tables) back into them, so
that the figures are visible in the repository (GitHub renders committed outputs).

    python .ci/render_notebooks.py [NOTEBOOK…]

Run it after changing a notebook or what it shows, and commit the result. Volatile metadata
(execution counts' timings, kernel session ids) is dropped so that a re-run only changes what the
notebook shows. tests/test_notebooks.py checks that every cell that draws a figure when executed
has that figure committed.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbclient
import nbformat

ROOT = Path(__file__).resolve().parents[1]


def render(path: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(ROOT)}}).execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            # progress bars on stderr and timings vary from run to run: keep results and figures only
            cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]
    nbformat.write(nb, path)
    print(f"rendered {path.relative_to(ROOT)}")


def main(argv) -> int:
    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    for p in paths:
        render(p)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
