"""Start-up benchmark: the first run of `pkm inverse-dynamics` for every robot in robots/ and the
first `pkm eom`, each a subprocess with an empty numba cache, beside the run that follows.

    python benchmarks/bench_startup.py [--robots a.toml b.toml] [--json PATH] [--markdown]

Each row is one robot file and one situation:

* ``cold``: an empty numba cache (``NUMBA_CACHE_DIR`` pointed at a fresh directory, which empties
  pkm's cache for that process without touching ``pkm/__pycache__``) — a fresh install;
* ``new structure``: the cache holds the kernels of the Delta (robots/delta_3rr2rrr.toml) only —
  a user's second robot, which compiles again what depends on its sizes;
* ``cached``: the same command again (everything loaded from the cache).

Wall time and the child's CPU time are reported; the machine's load average is printed, since
these figures depend on what else runs. Targets (issue 19): first ``inverse-dynamics`` ≤ 15 s and
first ``eom`` ≤ 5 s on 2 cores.
"""
from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _common as C

DELTA = C.ROOT / "robots" / "delta_3rr2rrr.toml"


def run(args, cache_dir) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``python -m pkm ARGS`` with numba's cache in ``cache_dir``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), PYTHONPATH=str(C.ROOT))
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


def measure(robots) -> list[dict]:
    rows = []
    for path in robots:
        rel = path.relative_to(C.ROOT)
        for what, args in (("inverse-dynamics", id_args(rel)), ("eom", eom_args(rel))):
            with tempfile.TemporaryDirectory(prefix="pkm-numba-") as cold:
                for situation in ("cold", "cached"):
                    wall, cpu, status = run(args, cold)
                    rows.append(dict(robot=rel.name, command=what, situation=situation, wall=wall, cpu=cpu,
                                     status=status))
                    print(f"{rel.name:24} {what:17} {situation:14} {wall:6.1f} s wall {cpu:6.1f} s cpu  {status}",
                          flush=True)
            if path != DELTA:
                with tempfile.TemporaryDirectory(prefix="pkm-numba-") as warm:
                    run(["inverse-dynamics" if what == "inverse-dynamics" else "eom",
                         *([DELTA.relative_to(C.ROOT)] if what == "inverse-dynamics" else eom_args(DELTA.relative_to(C.ROOT))[1:])],
                        warm)
                    wall, cpu, status = run(args, warm)
                    rows.append(dict(robot=rel.name, command=what, situation="new structure", wall=wall, cpu=cpu,
                                     status=status))
                    print(f"{rel.name:24} {what:17} {'new structure':14} {wall:6.1f} s wall {cpu:6.1f} s cpu  {status}",
                          flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--robots", nargs="+", type=Path, help="robot files (default: all in robots/)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON here")
    ap.add_argument("--markdown", action="store_true", help="print the rows as a Markdown table")
    a = ap.parse_args()
    robots = [p.resolve() for p in a.robots] if a.robots else sorted((C.ROOT / "robots").glob("*.toml"))
    cpu, vers = C.cpu_info(), C.versions()
    print(C.header("pkm start-up: first runs with an empty numba cache", cpu, vers))
    rows = measure(robots)
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    print(f"load average at the end: {load}")
    if a.markdown:
        print(C.markdown_table([[r["robot"], f"`pkm {r['command']}`", r["situation"], f"{r['wall']:.1f} s",
                                 f"{r['cpu']:.1f} s", r["status"]] for r in rows],
                               ["robot", "command", "numba cache", "wall", "CPU", "status"]))
    if a.json:
        C.write_json(a.json, {"machine": cpu, "versions": vers, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
