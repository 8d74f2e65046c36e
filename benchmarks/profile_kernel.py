"""Where the batch kernel's time goes, per numba function: ``perf`` sampling with named symbols.

    python benchmarks/profile_kernel.py [--robot robots/delta_3rr2rrr.toml] [--seconds 8] [--top 25]

Runs ``robot.inverse_dynamics`` (1 thread, N = 10⁴ samples of the robot file's trajectory) in a
loop while ``perf record`` samples this process, writes the symbol map of numba's compiled code
(``benchmarks/_perfmap.py``) and prints each function's share of the samples (self time: a
function's callees count for themselves). Most of the kernel's pieces are inlined into
``run_range`` (``forceinline``, see ``pkm.kernels.work._internal``); the IK solvers, the linear algebra
of ``pkm.lie.linalg`` and libm's ``sincos`` remain functions of their own, so the table splits the time
between the per-sample loop with the dynamics (``run_range``), the IK (``_solve_affine`` or
``_solve_general``) and those helpers.

``--inlined FUNCTION`` splits that function's samples by the source functions inlined into it (inclusive: a
sample counts for every function of its inline chain), from DWARF line tables: run with ``NUMBA_DEBUGINFO=1``
and a ``NUMBA_CACHE_DIR`` of its own (numba then compiles with line tables; that build keeps some small
helpers of ``pkm.lie.small`` out of line, so the shares are approximate), e.g.
``NUMBA_DEBUGINFO=1 NUMBA_CACHE_DIR=/tmp/dbg python benchmarks/profile_kernel.py --simd --inlined run_lanes``
(issue 32: where the lanes' time goes, per pipeline piece). ``--lines`` adds the split by source line (the
innermost frame), ``--sites F …`` the split of the samples inside each function ``F`` by its own lines (which
call of a piece costs what: e.g. ``--sites run_lanes vgeometry`` gave the lanes' Cholesky 6.5 % of the Delta's
samples on the AVX2 target, issue 32's fifth session).

Needs Linux ``perf`` (Debian: ``apt install linux-perf``; in a VM the ``cpu-clock`` event works)
and binutils' ``nm`` (and ``addr2line`` for ``--inlined``). A developer's tool: no figure here is a benchmark
result.
"""

from __future__ import annotations

import _perfmap  # noqa: I001  (first: it must see every numba library being loaded)

import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--robot", default=str(ROOT / "robots" / "delta_3rr2rrr.toml"))
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--seconds", type=float, default=8.0, help="how long perf samples")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--simd", action="store_true", help="the SIMD path (simd=True) instead of the scalar kernel")
    ap.add_argument("--no-t", action="store_true", help="without sample times (they are inferred)")
    ap.add_argument("--inlined", metavar="FUNCTION", help="split this function's samples by the source functions "
                    "inlined into it (run with NUMBA_DEBUGINFO=1)")
    ap.add_argument("--lines", action="store_true", help="with --inlined: also the source lines of the samples "
                    "(the innermost frame's)")
    ap.add_argument("--sites", metavar="FUNCTION", nargs="+", default=(), help="with --inlined: split the samples "
                    "inside each FUNCTION by its own source lines (where it calls the pieces inlined into it)")
    args = ap.parse_args(argv)
    perf = shutil.which("perf")
    if perf is None or shutil.which("nm") is None:
        print("profile_kernel: needs `perf` (apt install linux-perf) and `nm` (binutils)", file=sys.stderr)
        return 2

    import bench_inverse_dynamics as B
    import pkm

    robot = pkm.load(args.robot)
    tr = B.long_trajectory(robot, args.samples)

    def run():
        robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=None if args.no_t else tr.t, threads=1, simd=args.simd)

    run()  # compile or load everything first
    _perfmap.write()
    data = Path(tempfile.mkdtemp(prefix="pkm-perf-")) / "perf.data"
    rec = subprocess.Popen([perf, "record", "-e", "cpu-clock", "-F", "5000", "-p", str(os.getpid()), "-o",
                            str(data), "--", "sleep", str(args.seconds)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)  # let perf attach
    runs, t0 = 0, time.perf_counter()
    while rec.poll() is None:
        run()
        runs += 1
    per_sample = (time.perf_counter() - t0) / (runs * args.samples) if runs else float("nan")
    if rec.returncode != 0 or not data.exists():
        print(f"profile_kernel: perf record failed: {rec.stderr.read().strip()[-400:]}", file=sys.stderr)
        return 2
    report = subprocess.run([perf, "report", "-i", str(data), "--no-children", "--sort", "sym", "-g", "none",
                             "--stdio", "-F", "overhead,sym"], capture_output=True, text=True).stdout
    shares = collections.Counter()
    for line in report.splitlines():
        fields = line.split()
        if len(fields) >= 3 and fields[0].endswith("%") and fields[1] == "[.]":
            shares[_perfmap.demangle(fields[2])] += float(fields[0][:-1])
    print(f"{robot.name}: {runs} runs of {args.samples} samples, {per_sample * 1e6:.2f} µs per sample "
          f"(while sampled); share of perf samples per function (self time):")
    for name, share in shares.most_common(args.top):
        print(f"  {share:6.2f} %  {name}")
    if args.inlined:
        return _inlined(perf, data, args.inlined, args.top, args.lines, args.sites)
    return 0


def _inlined(perf, data, target, top, lines_too=False, sites=()) -> int:
    """``target``'s perf samples by the source functions of each sample's inline chain (``addr2line -i`` on the
    object code numba emitted for it, which has line tables under ``NUMBA_DEBUGINFO=1``); ``lines_too``: also by
    the innermost frame's source line; ``sites``: the samples inside each of these functions by its own line
    (the innermost frame of that function in the chain: the call site of the piece inlined there, or its own code)."""
    if shutil.which("addr2line") is None:
        print("profile_kernel: --inlined needs `addr2line` (binutils)", file=sys.stderr)
        return 2
    script = subprocess.run([perf, "script", "-i", str(data), "-F", "ip"], capture_output=True, text=True).stdout
    ips = collections.Counter(int(x, 16) for x in script.split())
    found = [(a, n, s) for a, n, s in _perfmap.symbols() if _perfmap.demangle(s).endswith("." + target)]
    if not found:
        print(f"profile_kernel: no compiled function named {target!r}", file=sys.stderr)
        return 2
    address, size, name = max(found, key=lambda f: sum(c for ip, c in ips.items() if f[0] <= ip < f[0] + f[1]))
    hits = {ip - address: c for ip, c in ips.items() if address <= ip < address + size}
    for library in _perfmap._LIBRARIES:
        with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
            f.write(library._perfmap_object)
        nm = subprocess.run(["nm", "--defined-only", f.name], capture_output=True, text=True).stdout
        offsets = [int(line.split()[0], 16) for line in nm.splitlines() if line.endswith(" " + name)]
        if offsets:
            break
        os.unlink(f.name)
    else:
        print(f"profile_kernel: the object code of {target!r} was not kept (import _perfmap before numba compiles)",
              file=sys.stderr)
        return 2
    lines = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", f.name],
                           input="\n".join(hex(offsets[0] + o) for o in hits), capture_output=True, text=True).stdout
    os.unlink(f.name)
    chains, frames, current = collections.defaultdict(set), collections.defaultdict(list), None
    it = iter(lines.splitlines())
    for line in it:
        if line.startswith("0x"):
            current = int(line, 16) - offsets[0]
        else:
            function = _perfmap.demangle(line).split(".")[-1]
            chains[current].add(function)
            where = next(it, "").split(" ")[0]  # file:line (addr2line appends " (discriminator N)")
            frames[current].append((function, where.rsplit("/", 1)[-1]))  # innermost first
    total = sum(hits.values())
    shares = collections.Counter()
    for offset, count in hits.items():
        for function in chains.get(offset, ()):
            shares[function] += count
    if len(shares) <= 1:
        print("profile_kernel: no inline information (run with NUMBA_DEBUGINFO=1 and a NUMBA_CACHE_DIR of its own)",
              file=sys.stderr)
        return 2
    print(f"{_perfmap.demangle(name)}: {total} samples; share per inlined source function (inclusive):")
    for function, count in shares.most_common(top):
        print(f"  {100 * count / total:6.2f} %  {function}")
    if lines_too:
        print("by the innermost frame's source line:")
        _print_split(hits, lambda offset: frames[offset][0][1] if frames.get(offset) else None, total, top)
    for site in sites:
        print(f"inside {site}, by its own source line:")
        _print_split(hits, lambda offset: next((w for f, w in frames.get(offset, ()) if f == site), None), total, top)
    return 0


def _print_split(hits, key, total, top) -> None:
    """Each ``hits`` offset's count under ``key(offset)`` (None: left out), the ``top`` shares of ``total``."""
    split = collections.Counter()
    for offset, count in hits.items():
        k = key(offset)
        if k is not None:
            split[k] += count
    for k, count in split.most_common(top):
        print(f"  {100 * count / total:6.2f} %  {k}")


if __name__ == "__main__":
    raise SystemExit(main())
