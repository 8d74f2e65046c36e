"""A guard against stale numba caches: clear them when any compiled source of pkm changed.

numba's ``cache=True`` checks only the source file of the function it loads. A cached caller
(``run_range`` in :mod:`pkm.kernels.inverse_dynamics`) keeps the machine code of its callees and
the values of the module constants it froze at compile time, so after an edit of
:mod:`pkm.lie.small` or of a layout constant in :mod:`pkm.kernels.model` it would silently run
the old code. :func:`check` runs when :mod:`pkm.lie` is imported, before any function is
compiled or loaded: it hashes the sources of the layers numba compiles (:data:`COMPILED`) and,
when the digest differs from the one stamped beside the cache, removes every cached index and
object file of pkm, so the next call compiles afresh (about 15 s) against the current sources.
Hashing costs about a millisecond.

By hand: ``python -m pkm.lie.numba_cache`` clears the caches (``--check`` only reports).
"""
from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

#: The package directory (``pkm/``).
PACKAGE = Path(__file__).resolve().parents[1]
#: Sub-packages whose functions numba compiles or whose module constants it freezes into compiled
#: code (the layers up to the kernels, and the planned simulation ones).
COMPILED = ("lie", "description", "algorithms", "kernels", "absolute", "sim")
#: File beside the cache (in ``pkm/__pycache__``) holding the digest the caches were built from.
STAMP = "numba-sources.sha256"
CACHE_SUFFIXES = (".nbi", ".nbc")


def sources_digest(root: Path = PACKAGE) -> str:
    """SHA-256 of the relative paths and contents of every ``.py`` file in the compiled layers."""
    h = hashlib.sha256()
    for part in COMPILED:
        for path in sorted((root / part).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def cache_dirs(root: Path = PACKAGE) -> list[Path]:
    """Where numba keeps pkm's caches: ``__pycache__`` beside the sources, and under
    ``NUMBA_CACHE_DIR`` if that is set (numba mirrors the source path there)."""
    dirs = [root]
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        dirs.append(Path(user) / root.relative_to(root.anchor))
    return dirs


def cache_files(root: Path = PACKAGE) -> list[Path]:
    """Every numba index (``.nbi``) and object (``.nbc``) file of pkm's functions."""
    out = []
    for d in cache_dirs(root):
        if d.is_dir():
            out += [p for p in d.rglob("*") if p.suffix in CACHE_SUFFIXES and p.is_file()]
    return sorted(out)


def clear(root: Path = PACKAGE) -> int:
    """Remove pkm's numba cache files; returns how many were removed."""
    n = 0
    for p in cache_files(root):
        try:
            p.unlink()
            n += 1
        except FileNotFoundError:  # another process cleared it first
            pass
    return n


def _stamp(root: Path) -> Path:
    return root / "__pycache__" / STAMP


def is_stale(root: Path = PACKAGE) -> bool:
    """Whether the caches were built from other sources than the current ones (or never stamped)."""
    try:
        return _stamp(root).read_text().strip() != sources_digest(root)
    except OSError:
        return True


def check(root: Path = PACKAGE) -> bool:
    """Clear the caches if the compiled sources changed since they were stamped; returns whether
    they were cleared. Does nothing where the package directory is not writable (an installed,
    read-only pkm, whose sources do not change)."""
    stamp = _stamp(root)
    digest = sources_digest(root)
    try:
        if stamp.read_text().strip() == digest:
            return False
    except OSError:
        pass
    try:
        stamp.parent.mkdir(exist_ok=True)
        clear(root)
        tmp = stamp.with_name(f"{STAMP}.{os.getpid()}")
        tmp.write_text(digest + "\n")
        os.replace(tmp, stamp)  # atomic: a concurrent process reads the old stamp or the new one
    except OSError:
        return False
    return True


#: File beside the stamp holding how many seconds the last first run spent compiling on this machine.
TIMING = "numba-compile-seconds"
#: The estimate shown before the first compile when no timing is recorded (2 cores, one robot).
DEFAULT_COMPILE_SECONDS = 15


def compile_estimate(root: Path = PACKAGE) -> int:
    """Seconds the longest compile of a run took here (a first run; rounded to 5 s), else
    :data:`DEFAULT_COMPILE_SECONDS`."""
    try:
        seconds = float(_stamp(root).with_name(TIMING).read_text())
    except (OSError, ValueError):
        return DEFAULT_COMPILE_SECONDS
    return int(max(5, 5 * round(seconds / 5))) if seconds == seconds else DEFAULT_COMPILE_SECONDS


class CompileAnnouncer:
    """Says so before numba compiles anything (a cache miss: the first run, a changed source, a new
    robot structure) and measures the time spent compiling. ``with CompileAnnouncer(write):`` —
    ``write(message)`` is called once, when the first compile starts; :attr:`seconds` is the wall
    time of the top-level compiles; on exit, a run that compiled for longer than any before records
    it for the next estimate (:func:`compile_estimate`). numba emits its ``numba:compile`` event only
    when a function is neither in memory nor in the disk cache, so a cached run says nothing."""

    def __init__(self, write, root: Path = PACKAGE):
        self.write, self.root = write, root
        self.announced, self.depth, self.seconds, self._t0 = False, 0, 0.0, 0.0
        self._listener = None

    def __enter__(self):
        import time

        from numba.core import event

        announcer = self

        class _Listener(event.Listener):
            def on_start(self, ev):
                if announcer.depth == 0:
                    announcer._t0 = time.perf_counter()
                announcer.depth += 1
                if not announcer.announced:
                    announcer.announced = True
                    announcer.write(f"compiling kernels (first run only, ~{compile_estimate(announcer.root)} s; "
                                    "later runs load them from the cache)")

            def on_end(self, ev):
                announcer.depth = max(0, announcer.depth - 1)
                if announcer.depth == 0:
                    announcer.seconds += time.perf_counter() - announcer._t0

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        if self.seconds > 1.0:   # the longest compile seen here (a full first run, not a partial one)
            path = _stamp(self.root).with_name(TIMING)
            try:
                previous = float(path.read_text())
            except (OSError, ValueError):
                previous = 0.0
            try:
                path.write_text(f"{max(previous, self.seconds):.1f}\n")
            except OSError:
                pass
        return False


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        print(f"pkm numba caches: {len(cache_files())} files, "
              f"{'stale (built from other sources)' if is_stale() else 'current'}")
        return 0
    if args:
        print("usage: python -m pkm.lie.numba_cache [--check]", file=sys.stderr)
        return 2
    n = clear()
    try:
        _stamp(PACKAGE).unlink()
    except OSError:
        pass
    print(f"removed {n} numba cache files of pkm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
