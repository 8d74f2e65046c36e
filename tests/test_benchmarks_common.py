"""benchmarks/_common.py: a benchmark measures the pkm of the checkout it is in, not whichever pkm the environment
has installed (Python puts the script's own directory, ``benchmarks/``, first on ``sys.path``; a second worktree of
a venv with an editable install of the first measured the first's code)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))  # as every benchmark script starts
import _common  # noqa: E402
import pkm  # noqa: E402
print(pkm.__file__)
print(pkm.MARK)
"""


def test_a_benchmark_imports_the_pkm_beside_it(tmp_path):
    """A copy of ``_common.py`` in another checkout (its own ``pkm`` package, a marker in it): a script there imports
    that ``pkm``, though the environment's installed pkm is importable too."""
    other = tmp_path / "other"
    (other / "benchmarks").mkdir(parents=True)
    (other / "pkm").mkdir()
    (other / "pkm" / "__init__.py").write_text("MARK = 'the other checkout'\n")
    shutil.copy(ROOT / "benchmarks" / "_common.py", other / "benchmarks" / "_common.py")
    (other / "benchmarks" / "bench_x.py").write_text(SCRIPT)
    out = subprocess.run([sys.executable, str(other / "benchmarks" / "bench_x.py")], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    path, mark = out.stdout.split("\n")[:2]
    assert Path(path).resolve() == (other / "pkm" / "__init__.py").resolve()
    assert mark == "the other checkout"
