"""Seed 001's lock with quaternion rotation rows (pkm.absolute.QuaternionLock) beside the director
lock (pkm.absolute.Lock): µs per evaluation of Φ + Jacobian + γ of one joint between two bodies.

Cases: a weld, a revolute mask, and a rheonomic weld (laws of the relative translation and
rotation); for the quaternion lock also :meth:`QuaternionLock.evaluate` (the three in one pass, the
seed's "compute the lock once"). Rounds are interleaved (each round times every variant once,
``--number`` evaluations each) and the median over ``--rounds`` is printed, so a load change on the
machine hits all variants alike. Timings are not asserted anywhere.

    python benchmarks/bench_quaternion_lock.py [--rounds 9] [--number 300]
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import cpu_info, table  # noqa: E402

from pkm.absolute import Body, Lock, Marker, QuaternionLock, laws  # noqa: E402


def _pose(rng):
    C = np.eye(4)
    C[:3, :3] = Rotation.random(random_state=rng).as_matrix()
    C[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    return C


def cases():
    rng = np.random.default_rng(0)
    bodies = [Body(name, 1.0, np.diag([0.1, 0.2, 0.3])) for name in "AB"]
    qs = [b.coordinates(_pose(rng)) for b in bodies]
    F = _pose(rng)
    markers = (Marker.at(bodies[0], qs[0], F), Marker.at(bodies[1], qs[1], F))
    rheo = dict(translation=laws.along([0, 0, 1], laws.sine(0.1, 2.0)),
                rotation=laws.about([0, 1, 1], laws.sine(0.5, 1.3)))
    qds = [b.velocity(q, rng.normal(size=6)) for b, q in zip(bodies, qs)]
    for label, mask, kw in (("weld", "weld", {}), ("revolute", "revolute", {}), ("weld, rheonomic", "weld", rheo)):
        yield label, Lock(*markers, mask, **kw), QuaternionLock(*markers, mask, **kw), qs, qds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--number", type=int, default=300)
    args = ap.parse_args(argv)
    cpu = cpu_info()
    print(f"CPU: {cpu.get('model_name')} ({cpu.get('usable_cpus')} usable CPUs, {cpu.get('mhz', '?')} MHz"
          f"{', VM' if cpu.get('hypervisor') else ''}); load average at start "
          f"{', '.join(f'{x:.2f}' for x in cpu.get('load_average_at_start', []))}")
    rows = []
    for label, director, quat, (qi, qj), (qdi, qdj) in cases():
        t = 0.3

        def separate(j):
            return lambda: (j.phi(qi, qj, t), j.jacobian(qi, qj, t), j.gamma(qi, qj, qdi, qdj, t))

        variants = {"director Lock": separate(director), "QuaternionLock": separate(quat),
                    "QuaternionLock.evaluate": lambda: quat.evaluate(qi, qj, qdi, qdj, t)}
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
            for k, fn in variants.items():
                fn()
                start = time.perf_counter()
                for _ in range(args.number):
                    fn()
                times[k].append((time.perf_counter() - start) / args.number)
        base = float(np.median(times["director Lock"]))
        for k, ts in times.items():
            med = float(np.median(ts))
            rows.append([label, k, f"{med * 1e6:.1f}", f"{med / base:.2f}"])
    print(table(rows, ["joint", "Φ + Jacobian + γ", "µs (median)", "× director"]))


if __name__ == "__main__":
    main()
