"""pkm.lie.numba_cache: an edit of a callee in another file never leaves a cached caller stale.

Each test works on a copy of the package in a temporary directory (its own numba cache), runs
``dexp_inv_so3`` (pkm/lie/dexp.py, cached) whose coefficient α comes from ``_alpha`` in another
file (pkm/lie/series.py), edits ``_alpha`` and runs again in a fresh interpreter.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

PKM = Path(__file__).resolve().parents[1] / "pkm"
SCRIPT = """
import numpy as np
import pkm.lie
print(repr(float(pkm.lie.dexp_inv_so3(np.array([0.1, -0.2, 0.3]))[0, 0])))
"""
OLD = "        return _horner(_C_ALPHA, t)\n"
NEW = "        return 2.0 * _horner(_C_ALPHA, t)\n"


def _copy(tmp_path: Path, guard: bool = True) -> Path:
    root = tmp_path / "src"
    shutil.copytree(PKM, root / "pkm", ignore=shutil.ignore_patterns("__pycache__"))
    if not guard:
        opts = root / "pkm" / "lie" / "options.py"
        opts.write_text(opts.read_text().replace("\nnumba_cache.check()\n", "\n"))
    return root


def _run(root: Path, cache_dir: Path | None = None) -> float:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(root)}
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=root, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    return float(out.stdout.strip())


def _expected(alpha_factor: float) -> float:
    """(dexp⁻¹)₀₀ = 1 + α (K²)₀₀ with K = skew(x) (paper eq. 7 and App. A), α from its closed form."""
    x = np.array([0.1, -0.2, 0.3])
    phi = np.linalg.norm(x)
    alpha = (1.0 - 0.5 * phi / np.tan(0.5 * phi)) / phi**2
    return 1.0 + alpha_factor * alpha * (-(x[1] ** 2 + x[2] ** 2))


def _edit(root: Path) -> None:
    series = root / "pkm" / "lie" / "series.py"
    text = series.read_text()
    assert text.count(OLD) == 1
    series.write_text(text.replace(OLD, NEW))


def test_an_edited_callee_is_recompiled_into_its_cached_caller(tmp_path):
    root = _copy(tmp_path)
    first = _run(root)
    assert abs(first - _expected(1.0)) < 1e-15
    assert list((root / "pkm" / "lie" / "__pycache__").glob("dexp.dexp_inv_so3-*.nbi")), "nothing was cached"
    _edit(root)
    assert abs(_run(root) - _expected(2.0)) < 1e-15  # the edit took effect in the cached caller
    assert abs(_run(root) - _expected(2.0)) < 1e-15  # and the caches are used again afterwards


def test_an_edited_callee_is_recompiled_with_a_user_cache_dir(tmp_path):
    """``NUMBA_CACHE_DIR`` (e.g. a second cache for another compile target): numba names its
    directories there ``<dir>_<sha1 of the source directory>``, which the guard clears too."""
    root, cache = _copy(tmp_path), tmp_path / "cache"
    assert abs(_run(root, cache) - _expected(1.0)) < 1e-15
    assert list(cache.glob("lie_*/dexp.dexp_inv_so3-*.nbi")), "nothing was cached there"
    _edit(root)
    assert abs(_run(root, cache) - _expected(2.0)) < 1e-15


def test_a_run_without_the_user_cache_dir_leaves_it_guarded(tmp_path):
    """Each cache has its own stamp: a run with the default cache after the edit clears and stamps
    that one only, and the ``NUMBA_CACHE_DIR`` cache is still cleared by the next run using it."""
    root, cache = _copy(tmp_path), tmp_path / "cache"
    _run(root, cache)
    _edit(root)
    assert abs(_run(root) - _expected(2.0)) < 1e-15
    assert abs(_run(root, cache) - _expected(2.0)) < 1e-15


def test_without_the_guard_the_cached_caller_keeps_the_old_callee(tmp_path):
    """The pitfall the guard exists for (numba 0.5x–0.6x): this documents numba's behaviour."""
    root = _copy(tmp_path, guard=False)
    first = _run(root)
    _edit(root)
    assert _run(root) == first


def test_an_edit_elsewhere_leaves_the_caches_alone(tmp_path, monkeypatch):
    from pkm.lie import numba_cache

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)  # the caches of _run's environment
    root = _copy(tmp_path)
    _run(root)
    n = len(numba_cache.cache_files(root / "pkm"))
    assert n > 0 and not numba_cache.is_stale(root / "pkm")
    cli = root / "pkm" / "cli" / "main.py"  # not a compiled layer
    cli.write_text(cli.read_text() + "\n# an edit\n")
    assert not numba_cache.is_stale(root / "pkm")
    series = root / "pkm" / "lie" / "series.py"
    series.write_text(series.read_text() + "\n# an edit\n")
    assert numba_cache.is_stale(root / "pkm")
    assert numba_cache.check(root / "pkm") is True
    assert numba_cache.cache_files(root / "pkm") == [] and not numba_cache.is_stale(root / "pkm")
