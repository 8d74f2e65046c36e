"""The reachability analysis' two passes in numba (pkm.kernels.reachability) against the Python passes they
replaced (written out here): the same bits on the rows of real cycles and on random rows with invalid entries,
and the same one-line errors where a path cannot be run."""
from __future__ import annotations

import math

import numpy as np
import pytest

import pkm
from pkm.planning import pick_place_route
from pkm.planning.coefficients import motor_gains
from pkm.planning.constraints import resolve_limits
from pkm.planning.reachability import SLACK, _split, reachability, static_sets
from pkm.planning.solve import _points, _solve_piece


def _reference(A, B, C, xmax, ds):
    """The Python passes of pkm.planning.reachability before they moved to numba (2026-11-28)."""
    Lp, Lr, Up, Ur, _, _ = _split(A, B, C)
    X = static_sets(A, B, C, xmax)
    N = A.shape[0]
    inv = 1.0 / (2.0 * ds)
    lows = [[(p, r) for p, r in zip(pp, rr) if r != -math.inf] for pp, rr in zip(Lp.tolist(), Lr.tolist())]
    ups = [[(p, r) for p, r in zip(pp, rr) if r != math.inf] for pp, rr in zip(Up.tolist(), Ur.tolist())]
    Xl = X.tolist()
    K = [(0.0, 0.0)] * N
    for i in range(N - 2, -1, -1):
        klo, khi = K[i + 1]
        a, b = Xl[i]
        for k, r in [(p + inv, khi * inv - q) for p, q in lows[i]] + [(-inv - p, q - klo * inv) for p, q in ups[i]]:
            if k > 0.0:
                b = min(b, r / k)
            elif k < 0.0:
                a = max(a, r / k)
            elif r < 0.0:
                a, b = math.inf, -math.inf
        if not b >= a - SLACK * max(1.0, abs(b)):
            raise pkm.PkmError(f"the path cannot be run: no controllable speed at point {i} of {N} (the limits "
                               f"cannot stop the motion before the end)")
        K[i] = (max(0.0, min(a, b)), max(0.0, b))
    if K[0][0] > SLACK:
        raise pkm.PkmError("the path cannot be run from rest within the limits")
    x, u = [0.0] * N, [0.0] * N
    for i in range(N - 1):
        xi = x[i]
        L = max((p * xi + r for p, r in lows[i]), default=-math.inf)
        U = min((p * xi + r for p, r in ups[i]), default=math.inf)
        klo, khi = K[i + 1]
        ui = max(min(U, (khi - xi) * inv), L, (klo - xi) * inv)
        u[i] = ui
        x[i + 1] = min(max(xi + 2.0 * ds * ui, klo), khi)
    L = max((r for p, r in lows[-1]), default=-math.inf)
    U = min((r for p, r in ups[-1]), default=math.inf)
    u[-1] = L if math.isfinite(L) else min(U, 0.0)
    return np.array(x), np.array(u), np.array(K)


def _same(A, B, C, xmax, ds):
    try:
        ref = _reference(A, B, C, xmax, ds)
    except pkm.PkmError as exc:
        with pytest.raises(pkm.PkmError) as info:
            reachability(A, B, C, xmax, ds)
        assert str(info.value) == str(exc)
        return False
    got = reachability(A, B, C, xmax, ds)
    for a, b in zip((got.x, got.u, got.K), ref):
        assert np.array_equal(a, b, equal_nan=True)
    return True


@pytest.mark.parametrize("robot_file", ["examples/delta_servo.toml", "examples/irsbot2_servo.toml"])
def test_the_same_bits_on_a_cycles_rows(robot_file):
    robot = pkm.load(robot_file)
    w = np.asarray(robot.spec.trajectory["start"], dtype=float)
    route = pick_place_route(np.array([w["xyz".index(c)] for c in robot.task.coordinate_names()]))
    limits, gains = resolve_limits(robot), motor_gains(robot.drives, robot.n_act)
    for path, n in zip(route.paths, _points(600, route)):
        pd, prof, rows, xmax, _, _ = _solve_piece(robot, path, n, limits, gains)
        assert _same(*rows, xmax, pd.s[1] - pd.s[0])
        assert np.max(prof.x) > 0.1


def test_the_same_bits_and_errors_on_random_rows():
    """Random rows (some invalid: A = 0 bounds x alone or nothing), some paths that cannot be run."""
    rng = np.random.default_rng(28)
    ran = 0
    for trial in range(60):
        N, m = int(rng.integers(2, 40)), int(rng.integers(1, 7))
        A = rng.normal(size=(N, m)) * (rng.random((N, m)) > 0.2)
        B = rng.normal(size=(N, m))
        C = -rng.uniform(0.01, 2.0, (N, m)) * (1 if trial % 5 else -0.1)
        xmax = np.where(rng.random(N) > 0.3, rng.uniform(0.5, 5.0, N), np.inf)
        try:
            static_sets(A, B, C, xmax)
        except pkm.PkmError:
            continue
        ran += _same(A, B, C, xmax, float(rng.uniform(1e-3, 0.1)))
    assert ran >= 10
