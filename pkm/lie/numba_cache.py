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


def _locations(root: Path) -> list[tuple[Path, list[Path]]]:
    """``(stamp file, cache directories)`` per place numba keeps pkm's caches: ``__pycache__``
    beside the sources, and, if ``NUMBA_CACHE_DIR`` is set, that directory, where numba names one
    directory per source directory ``<name>_<sha1 of its absolute path>`` (its
    ``UserProvidedCacheLocator``; older numba mirrored the source path, also covered). Each place
    has a stamp of its own: a run without ``NUMBA_CACHE_DIR`` that clears and stamps the first
    must not leave the second (a cache for another compile target, say) stale."""
    out = [(root / "__pycache__" / STAMP, [root])]
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user:
        dirs = [Path(user) / root.relative_to(root.anchor)]
        for d in [root, *sorted(p for p in root.rglob("*") if p.is_dir() and p.name != "__pycache__")]:
            path = os.path.abspath(d)
            dirs.append(Path(user) / f"{os.path.basename(path)}_{hashlib.sha1(path.encode()).hexdigest()}")
        key = hashlib.sha1(os.path.abspath(root).encode()).hexdigest()[:16]
        out.append((Path(user) / f"{STAMP}.{key}", dirs))
    return out


def cache_dirs(root: Path = PACKAGE) -> list[Path]:
    """Where numba keeps pkm's caches (:func:`_locations`)."""
    return [d for _, dirs in _locations(root) for d in dirs]


def _files(dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        if d.is_dir():
            out += [p for p in d.rglob("*") if p.suffix in CACHE_SUFFIXES and p.is_file()]
    return sorted(out)


def cache_files(root: Path = PACKAGE) -> list[Path]:
    """Every numba index (``.nbi``) and object (``.nbc``) file of pkm's functions."""
    return _files(cache_dirs(root))


def _remove(files: list[Path]) -> int:
    n = 0
    for p in files:
        try:
            p.unlink()
            n += 1
        except FileNotFoundError:  # another process cleared it first
            pass
    return n


def clear(root: Path = PACKAGE) -> int:
    """Remove pkm's numba cache files; returns how many were removed."""
    return _remove(cache_files(root))


def _stamp(root: Path) -> Path:
    return root / "__pycache__" / STAMP


def is_stale(root: Path = PACKAGE) -> bool:
    """Whether the caches were built from other sources than the current ones (or never stamped)."""
    digest = sources_digest(root)
    for stamp, _ in _locations(root):
        try:
            if stamp.read_text().strip() != digest:
                return True
        except OSError:
            return True
    return False


def check(root: Path = PACKAGE) -> bool:
    """Clear the caches if the compiled sources changed since they were stamped; returns whether
    they were cleared. Does nothing where the package directory is not writable (an installed,
    read-only pkm, whose sources do not change)."""
    digest = sources_digest(root)
    cleared = False
    for stamp, dirs in _locations(root):
        try:
            if stamp.read_text().strip() == digest:
                continue
        except OSError:
            pass
        try:
            stamp.parent.mkdir(parents=True, exist_ok=True)
            _remove(_files(dirs))
            tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}")
            tmp.write_text(digest + "\n")
            os.replace(tmp, stamp)  # atomic: a concurrent process reads the old stamp or the new one
        except OSError:
            continue
        cleared = True
    return cleared


#: File beside the stamp holding the seconds the last compiling run of each (command, robot) spent
#: compiling on this machine (JSON: ``{"inverse-dynamics|/path/robot.toml": 9.3, …}``).
TIMING = "numba-compile-seconds.json"
#: Seconds of compiling before a first run, by kind of command, when this machine has measured
#: neither the robot nor any robot for that kind. Calibrated on an AMD EPYC Zen 5 VM, 2 vCPUs
#: (``python benchmarks/bench_startup.py``, benchmarks/README.md "Start-up per robot": the cold run
#: minus the cached one): the single-point commands compile only what loading a robot compiles
#: (0.8–1.3 s), the trajectory commands the batch kernels too (8.3–14.2 s for the files in robots/,
#: the complex limbs of the IRSBot-2 and the 3R[2US] Delta the longest), ``pkm compile`` every kernel
#: (about one trajectory command per robot; a second robot reuses its shared kernels, 4–9 s).
DEFAULT_COMPILE_SECONDS = {"one-point": 1.0, "trajectory": 10.0}
#: Seconds for each further robot of ``pkm compile`` (the shared kernels are compiled by then).
FURTHER_ROBOT_SECONDS = 6.0


def _timings(root: Path) -> dict:
    import json

    try:
        doc = json.loads(_stamp(root).with_name(TIMING).read_text())
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in doc.items() if isinstance(v, (int, float)) and v == v} \
        if isinstance(doc, dict) else {}


def _rounded(seconds: float) -> int:
    """Whole seconds below 10 s, else 5 s steps."""
    return int(max(1, round(seconds))) if seconds < 10 else int(5 * round(seconds / 5))


def compile_estimate(root: Path = PACKAGE, key: str | None = None, kind: str = "trajectory", robots: int = 1) -> int:
    """Seconds the compile about to start should take, for the run named by ``key``
    (``"COMMAND|robot file"``, :func:`pkm.cli.main._announcer`) of ``kind`` (``"one-point"``,
    ``"trajectory"``, ``"compile"``): the measurement of that same run on this machine when there is
    one (its last compile, not the slowest ever), else the median of this machine's measurements of
    runs of the same kind (another robot), else :data:`DEFAULT_COMPILE_SECONDS` (a measured
    figure). ``pkm compile`` of ``robots`` files: the first robot's figure plus
    :data:`FURTHER_ROBOT_SECONDS` for each further one."""
    import statistics

    times = _timings(root)
    if key is not None and key in times:
        return _rounded(times[key])
    base = "trajectory" if kind == "compile" else kind
    same = [v for k, v in times.items() if k.split("|", 1)[0] == base]
    first = statistics.median(same) if same else DEFAULT_COMPILE_SECONDS.get(base, DEFAULT_COMPILE_SECONDS["trajectory"])
    return _rounded(first + FURTHER_ROBOT_SECONDS * max(0, robots - 1) if kind == "compile" else first)


class CompileAnnouncer:
    """Says so before numba compiles anything (a cache miss: the first run, a changed source, a new
    robot structure) and measures the time spent compiling. ``with CompileAnnouncer(write):`` —
    ``write(message)`` is called once, when the first compile starts, with the estimate of
    :func:`compile_estimate` for ``key``/``kind``/``robots``; :attr:`seconds` is the wall time of
    the top-level compiles; on exit, a run that compiled records it under ``key`` (and under its
    kind, for other robots' first estimates). numba emits its ``numba:compile`` event only when a
    function is neither in memory nor in the disk cache, so a cached run says nothing."""

    def __init__(self, write, root: Path = PACKAGE, key: str | None = None, kind: str = "trajectory",
                 robots: int = 1):
        self.write, self.root, self.key, self.kind, self.robots = write, root, key, kind, robots
        self.announced, self.depth, self.seconds, self._t0 = False, 0, 0.0, 0.0
        self._listener = None

    def estimate(self) -> int:
        return compile_estimate(self.root, self.key, self.kind, self.robots)

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
                    announcer.write(f"compiling kernels (first run only, ~{announcer.estimate()} s; "
                                    "later runs load them from the cache)")

            def on_end(self, ev):
                announcer.depth = max(0, announcer.depth - 1)
                if announcer.depth == 0:
                    announcer.seconds += time.perf_counter() - announcer._t0

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        import json

        from numba.core import event

        event.unregister("numba:compile", self._listener)
        if self.seconds > 0.5 and self.key is not None and exc[0] is None:   # a compile of a run that ended
            times = _timings(self.root)
            times[self.key] = round(self.seconds, 1)
            path = _stamp(self.root).with_name(TIMING)
            try:
                path.parent.mkdir(exist_ok=True)
                tmp = path.with_name(f"{TIMING}.{os.getpid()}")
                tmp.write_text(json.dumps(times, indent=0, sort_keys=True) + "\n")
                os.replace(tmp, path)
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
    for stamp, _ in _locations(PACKAGE):
        try:
            stamp.unlink()
        except OSError:
            pass
    print(f"removed {n} numba cache files of pkm")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
