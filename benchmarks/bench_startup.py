"""Start-up benchmark: the first run of `pkm inverse-dynamics` for every robot in robots/ and the
first `pkm eom`, each a subprocess with an empty numba cache, beside the run that follows.

    python benchmarks/bench_startup.py [--robots a.toml b.toml] [--commands eom] [--repeats 3] [--json PATH] [--markdown]
    python benchmarks/bench_startup.py --main-job [--repeats 3]   # the README's main job only

Each row is one robot file and one situation:

* ``cold``: an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a fresh directory, which empties
  pkm's cache for that process without touching ``pkm/__pycache__``) — a fresh install;
* ``new structure``: the cache holds the kernels of the Delta (robots/delta_3rr2rrr.toml) only —
  a user's second robot, which compiles again what depends on its sizes;
* ``cached``: the same command again (everything loaded from the cache).

Each row is the median of ``--repeats`` runs (default 3), each cold start in its own empty cache;
wall time and the child's CPU time are reported; the machine's load average is printed with
every row, since these figures depend on what else runs. Targets (issue 19): first ``inverse-dynamics`` ≤ 15 s and
first ``eom`` ≤ 5 s on 2 cores.

``--main-job``: only the README's main job, ``pkm inverse-dynamics robots/delta_3rr2rrr.toml --out
t.csv --plot t.png`` (into a temporary directory), cold and cached; targets (issue 32): first run
≤ 10 s, second ≤ 1 s on a quiet 2-core machine.

Python's bytecode cache: the runs keep pkm's ``.pyc`` files, as an installed pkm has them (pip
compiles them at install; an editable install writes them on its first run), even where the
calling environment sets ``PYTHONDONTWRITEBYTECODE`` (as some sandboxes and containers do); there
every run compiled pkm's ~75 imported modules from source, ~0.08 s of a cached main job.
``--no-bytecode`` measures that situation: ``PYTHONDONTWRITEBYTECODE=1`` in the runs, and pkm's
``.pyc`` files (``pkm/**/__pycache__/*.pyc``, never the numba caches beside them) deleted before
each run, since Python still reads those it finds.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as C

DELTA = C.ROOT / "robots" / "delta_3rr2rrr.toml"


#: Whether the runs keep Python's bytecode cache (``--no-bytecode``: not; see the module docstring).
BYTECODE = True


def run(args, cache_dir) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python -m pkm ARGS`` with numba's cache in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(C.ROOT))
    if BYTECODE:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        for pyc in (C.ROOT / "pkm").rglob("__pycache__/*.pyc"):
            pyc.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "pkm", *map(str, args)], cwd=C.ROOT, env=env, capture_output=True,
                       text=True, timeout=1200)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        return wall, cpu, "FAILED: " + (p.stderr.strip().splitlines() or ["?"])[-1]
    return wall, cpu, "ok"


def eom_args(path):
    """`pkm eom ROBOT --at x_ref` (the reference task coordinates, as pkm info prints them)."""
    import pkm

    robot = pkm.load(path)
    return ["eom", path, "--at", *map(repr, robot.x_ref.tolist())]


def id_args(path):
    """`pkm inverse-dynamics ROBOT`: its default trajectory, else a 50 mm line from its reference pose."""
    import pkm

    robot = pkm.load(path)
    if robot.spec.trajectory:
        return ["inverse-dynamics", path]
    end = robot.position_ref + [0.05, 0.0, 0.0]
    return ["inverse-dynamics", path, "--trajectory", "line", "--end", *map(repr, end.tolist())]


def measure_main_job(repeats: int = 1) -> list[dict]:
    """The README's main job (the Delta's default trajectory, CSV and plot written): ``cold`` and
    ``cached`` rows, each cold start in its own empty cache, ``repeats`` times (the median)."""
    cold, cached = [], []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="pkm-numba-") as empty, \
                tempfile.TemporaryDirectory(prefix="pkm-out-") as out:
            args = ["inverse-dynamics", DELTA.relative_to(C.ROOT), "--out", Path(out) / "t.csv",
                    "--plot", Path(out) / "t.png"]
            cold.append(run(args, empty))
            cached.append(run(args, empty))
    return [_row(DELTA.name, "main job", "cold", cold), _row(DELTA.name, "main job", "cached", cached)]


def _row(robot, what, situation, runs) -> dict:
    """One table row: the median wall and CPU time of ``runs`` [(wall, cpu, status)], all walls kept."""
    walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
    bad = [r[2] for r in runs if r[2] != "ok"]
    row = dict(robot=robot, command=what, situation=situation, wall=statistics.median(walls),
               cpu=statistics.median(cpus), walls=walls, cpus=cpus, status=bad[0] if bad else "ok")
    print(f"{robot:24} {what:17} {situation:14} {row['wall']:6.2f} s wall {row['cpu']:6.2f} s cpu  {row['status']}"
          f"  (runs: {', '.join(f'{w:.2f}' for w in walls)}; cpu: {', '.join(f'{c:.2f}' for c in cpus)}; "
          f"load {_load()})", flush=True)
    return row


def measure(robots, repeats: int = 1, commands=("inverse-dynamics", "eom")) -> list[dict]:
    """Rows per robot and command: ``cold`` and ``cached`` (each cold start in its own empty cache,
    ``repeats`` times; the median), and ``new structure`` (the Delta's kernels cached first)."""
    rows = []
    delta = DELTA.relative_to(C.ROOT)
    for path in robots:
        rel = path.relative_to(C.ROOT)
        for what, args in (("inverse-dynamics", id_args(rel)), ("eom", eom_args(rel))):
            if what not in commands:
                continue
            cold, cached = [], []
            for _ in range(repeats):
                with tempfile.TemporaryDirectory(prefix="pkm-numba-") as empty:
                    cold.append(run(args, empty))
                    cached.append(run(args, empty))
            rows += [_row(rel.name, what, "cold", cold), _row(rel.name, what, "cached", cached)]
            if path != DELTA:
                new = []
                for _ in range(repeats):
                    with tempfile.TemporaryDirectory(prefix="pkm-numba-") as warm:
                        run(id_args(delta) if what == "inverse-dynamics" else eom_args(delta), warm)
                        new.append(run(args, warm))
                rows.append(_row(rel.name, what, "new structure", new))
    return rows


#: Issue 19's targets for a first run (wall seconds on 2 cores); issue 32's for the main job.
TARGETS = {"inverse-dynamics": 15.0, "eom": 5.0, "main job": 10.0}
#: Issue 32's target for the main job's second run (wall seconds on 2 cores).
CACHED_TARGETS = {"main job": 1.0}


def _target(row) -> str:
    """"≤ 15 s: met" (or missed, or the failure) for a first run; blank for a cached one."""
    if row["status"] != "ok":
        return row["status"]
    if row["situation"] == "cached":
        limit = CACHED_TARGETS.get(row["command"])
        return "" if limit is None else f"≤ {limit:g} s: {'met' if row['wall'] <= limit else 'missed'}"
    limit = TARGETS[row["command"]]
    return f"≤ {limit:g} s: {'met' if row['wall'] <= limit else 'missed'}"


def _command(what) -> str:
    return "`pkm inverse-dynamics … --out … --plot …` (main job)" if what == "main job" else f"`pkm {what}`"


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", type=Path, help="robot files (default: all in robots/)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--markdown", action="store_true", help="print the rows as a Markdown table")
    ap.add_argument("--repeats", type=int, default=3,
                    help="cold starts per row, each in a fresh cache; the table gives the median (default 3)")
    ap.add_argument("--commands", nargs="+", choices=("inverse-dynamics", "eom"), default=("inverse-dynamics", "eom"),
                    help="which first runs to time (default both)")
    ap.add_argument("--main-job", action="store_true",
                    help="time only the README's main job (inverse-dynamics of the Delta with --out and --plot)")
    ap.add_argument("--no-bytecode", action="store_true",
                    help="run with PYTHONDONTWRITEBYTECODE=1: pkm's modules compiled from source every run (default: "
                         "Python's .pyc cache kept, as an installed pkm has it)")
    a = ap.parse_args()
    global BYTECODE
    BYTECODE = not a.no_bytecode
    robots = [p.resolve() for p in a.robots] if a.robots else sorted((C.ROOT / "robots").glob("*.toml"))
    cpu, vers = C.cpu_info(), C.versions()
    print(C.header("pkm start-up: first runs with an empty numba cache", cpu, vers))
    load_start = _load()
    print(f"load average at the start: {load_start}")
    print("Python bytecode cache: " + ("kept (.pyc files written and read)" if BYTECODE else
                                       "off (PYTHONDONTWRITEBYTECODE=1: pkm compiled from source every run)"))
    rows = measure_main_job(max(1, a.repeats)) if a.main_job else measure(robots, max(1, a.repeats), a.commands)
    load = _load()
    print(f"load average at the end: {load}")
    if a.markdown:
        print(C.markdown_table([[r["robot"], _command(r["command"]), r["situation"], f"{r['wall']:.1f} s",
                                 f"{r['cpu']:.1f} s", _target(r)] for r in rows],
                               ["robot", "command", "numba cache", f"wall (median of {a.repeats})", "CPU of the run",
                                "target (wall)"]))
    if a.json:
        C.write_json(a.json, {"machine": cpu, "versions": vers, "repeats": a.repeats, "load_average_start": load_start,
                              "load_average_end": load, "bytecode": BYTECODE, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
