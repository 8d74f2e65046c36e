"""The numba kernels run as plain Python (pkm.lie.interpret) give the compiled kernels' results.

The single-point commands (`pkm eom`, `ik`, `info`, `fk`, `show`) and the affine-closure check of
pkm.kernels.model.pack run the reference algorithms' source as Python instead of compiling it;
every comparison here is against the compiled dispatcher of the same function (to 1e-12, the
compiled helpers may use FMA). `pkm.load` keeps the compiled kernels (its pivoted QRs).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from conftest import ROBOTS, ROOT
from numba.core.dispatcher import Dispatcher

import pkm
from pkm.algorithms import dynamics as dyn
from pkm.algorithms import kinematics as kin
from pkm.algorithms.constraints import bias, jacobian, residual
from pkm.lie import (Ad, Ad_inv, ad, coad, dexp_inv_se3, dexp_se3, dexp_so3, dexp_so3_dot, exp_se3, exp_so3, log_se3,
                     log_so3)
from pkm.lie.interpret import as_python, interpreting, kernel, python_kernels
from pkm.lie.linalg import condition_number

ROBOT_FILES = sorted(p.name for p in ROBOTS.glob("*.toml"))
TOL = 1e-12


def close(a, b, tol=TOL):
    """max |a − b| ≤ tol · max(1, max |b|): absolute for small arrays, relative to the largest entry
    for large ones (a mass matrix in kg·m² beside entries of 1e4 that cancel)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert a.shape == b.shape
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    err, scale = np.abs(a - b).max(initial=0.0), max(1.0, np.abs(b).max(initial=0.0))
    assert err <= tol * scale, f"max |a - b| = {err:.3g} > {tol:g} x {scale:.3g}"


def test_mode_is_scoped_and_per_thread():
    assert not interpreting() and kernel(exp_so3) is exp_so3
    with python_kernels():
        assert interpreting()
        f = kernel(exp_so3)
        assert not isinstance(f, Dispatcher) and f is as_python(exp_so3)  # memoized
        seen = []
        t = threading.Thread(target=lambda: seen.append(interpreting()))
        t.start(), t.join()
        assert seen == [False]          # another thread keeps the compiled kernels
        with python_kernels(False):
            assert kernel(exp_so3) is exp_so3
        assert interpreting()
    assert not interpreting()
    with pytest.raises(RuntimeError):
        with python_kernels():
            raise RuntimeError
    assert not interpreting()


def test_as_python_replaces_dispatchers_only_in_its_copy():
    f = as_python(kin.relative_poses_into)
    assert f.__globals__["exp_joint"] is as_python(kin.exp_joint)
    assert isinstance(kin.exp_joint, Dispatcher)                 # the module keeps its dispatcher
    assert f.__globals__["np"] is np
    assert as_python(np.sin) is np.sin                           # not a dispatcher: itself


@pytest.mark.parametrize("scale", [0.0, 1e-9, 0.3, 0.999, 1.0, 2.5, np.pi - 1e-7])
def test_lie_functions(scale):
    """Both branches of the series coefficients (φ < 1 and above) and the log near π."""
    rng = np.random.default_rng(int(scale * 1e6) + 1)
    u = rng.normal(size=3)
    w = scale * u / np.linalg.norm(u)
    X = np.concatenate([w, rng.normal(size=3)])
    Y = rng.normal(size=6)
    for f, args in ((exp_so3, (w,)), (dexp_so3, (w,)), (dexp_so3_dot, (w, Y[:3])), (exp_se3, (X,)),
                    (dexp_se3, (X,)), (ad, (X,)), (coad, (X,)), (log_so3, (exp_so3(w),)), (log_se3, (exp_se3(X),)),
                    (Ad, (exp_se3(X),)), (Ad_inv, (exp_se3(X),))):
        close(as_python(f)(*args), f(*args))
    if scale < 3.0:  # dexp⁻¹ is singular at φ = 2π only; its series and closed form
        close(as_python(dexp_inv_se3)(X), dexp_inv_se3(X), 1e-11)


def test_condition_number():
    rng = np.random.default_rng(3)
    for shape in ((4, 4), (7, 3)):
        A = rng.normal(size=shape)
        with python_kernels():
            c = condition_number(A)
        close(c, condition_number(A))
    with python_kernels():
        assert condition_number(np.zeros((3, 3))) == np.inf


@pytest.mark.parametrize("name", ["serial_6r.toml", "delta_3r2us.toml", "hexapod_6ups.toml"])
def test_tree_algorithms(name):
    """Kinematics, constraints and dynamics of each limb tree at a random state."""
    robot = pkm.load(ROBOTS / name)
    rng = np.random.default_rng(7)
    for limb in robot.limbs:
        tree, n = limb.tree, limb.tree.n
        q, qd, qdd = rng.uniform(-0.5, 0.5, n), rng.normal(size=n), rng.normal(size=n)
        calls = [lambda: kin.forward_kinematics(tree, q), lambda: kin.body_jacobians(tree, q),
                 lambda: kin.body_twists(tree, q, qd), lambda: kin.jacobian_derivatives(tree, q, qd),
                 lambda: kin.body_accelerations(tree, q, qd, qdd),
                 lambda: dyn.inverse_dynamics(tree, q, qd, qdd), lambda: dyn.mass_matrix(tree, q),
                 lambda: dyn.coriolis_matrix(tree, q, qd), lambda: dyn.gravity_forces(tree, q),
                 lambda: dyn.kinetic_energy(tree, q, qd)]
        C, J = kin.forward_kinematics(tree, q), kin.body_jacobians(tree, q)
        V, Ab = J @ qd, kin.jacobian_derivatives(tree, q, qd) @ qd
        for lp in limb.loops:
            calls += [lambda cut=lp.cut: residual(cut, C), lambda cut=lp.cut: jacobian(cut, C, J),
                      lambda cut=lp.cut: bias(cut, C, V, Ab)]
        for call in calls:
            compiled = call()
            with python_kernels():
                close(call(), compiled)


@pytest.mark.parametrize("name", ROBOT_FILES)
def test_eom_ik_and_mass_matrix(name):
    """`Robot.eom` (all seven terms), the IK and `mass_matrix` away from the reference pose."""
    robot = pkm.load(ROBOTS / name)
    x = robot.x_ref + np.linspace(0.01, 0.02, robot.task_dof)
    xd = np.linspace(0.2, -0.1, robot.task_dof)
    ref = robot.eom(x, xd)
    sol = robot.inverse_kinematics(x, xd, np.zeros_like(x))
    with python_kernels():
        e = robot.eom(x, xd)
        s = robot.inverse_kinematics(x, xd, np.zeros_like(x))
        M = robot.mass_matrix(x)
    for key in ("M_t", "C_t_V_t", "W_t_grav", "J_IK", "M_a", "C_a_qd_a", "Q_a_grav"):
        close(getattr(e, key), getattr(ref, key))
    close(M, ref.M_t)
    close(s.q_act, sol.q_act), close(s.J_IK, sol.J_IK)
    for limb in robot.limbs:
        close(s.joints[limb.name], sol.joints[limb.name]), close(s.joints_d[limb.name], sol.joints_d[limb.name])


@pytest.mark.parametrize("name", ROBOT_FILES)
def test_the_loops_partition_does_not_depend_on_rounding(name):
    """The independent rows and the y/q partition of every loop come out the same from the loop
    Jacobian ``G`` formed by the compiled kernels (FMA), by the interpreted ones (as `pkm.load` forms
    it: nothing to compile) and from ``G`` with rounding-level noise (relative 1e-15): the IRSBot-2's
    and the 3R[2US]'s US pairs tie exactly, and LAPACK's pivoted QR broke those ties by the last bit
    (pkm.algorithms.pivoting). And `pkm.load` inside python_kernels builds the same limbs."""
    from pkm.algorithms.limb import _independent_rows, _partition

    robot = pkm.load(ROBOTS / name)
    with python_kernels():
        again = pkm.load(ROBOTS / name)
    rng = np.random.default_rng(7)
    for limb, other in zip(robot.limbs, again.limbs):
        assert (limb.q_index == other.q_index).all()
        zero = np.zeros(limb.tree.n)
        for lp, lq in zip(limb.loops, other.loops):
            assert (lp.rows == lq.rows).all() and (lp.y == lq.y).all() and (lp.q == lq.q).all()
            Gs = []
            for mode in (False, True):
                with python_kernels(mode):
                    C, J = kin.forward_kinematics(limb.tree, zero), kin.body_jacobians(limb.tree, zero)
                    Gs.append(jacobian(lp.cut, C, J)[:, lp.cols])
            Gs += [Gs[0] * (1.0 + 1e-15 * rng.standard_normal(Gs[0].shape)) for _ in range(12)]
            first = None   # (the file may name the independent coordinates: then load does not pick them)
            for G in Gs:
                rows = _independent_rows(G, 1e-9)
                assert (rows == lp.rows).all(), (limb.name, rows, lp.rows)
                y, q = _partition(G[rows], lp.cols, limb.tree.actuated, 1e-9, limb.name, "cut")
                first = (y, q) if first is None else first
                assert (y == first[0]).all() and (q == first[1]).all(), (limb.name, y, first[0])


@pytest.mark.parametrize("name", ROBOT_FILES)
def test_affine_closure(name):
    """The kernels' packing (pkm.kernels.model.pack) checks each limb's affine closure with the
    interpreted kernels: the same verdict, and H and c to 1e-12, as compiled."""
    robot = pkm.load(ROBOTS / name)
    for limb in robot.limbs:
        compiled = limb.affine_closure(1e-13)
        with python_kernels():
            interpreted = limb.affine_closure(1e-13)
        assert (compiled is None) == (interpreted is None)
        if compiled is not None:
            close(interpreted[0], compiled[0]), close(interpreted[1], compiled[1])


CHILD = """
import sys
from numba.core import event
compiled, depth = [], [0]
class L(event.Listener):
    def on_start(self, ev):
        if depth[0] == 0:
            compiled.append(ev.data["dispatcher"].py_func.__qualname__)
        depth[0] += 1
    def on_end(self, ev):
        depth[0] -= 1
event.register("numba:compile", L())
from pkm.cli.main import main
code = main(sys.argv[1:])
print("COMPILED", ",".join(sorted(set(compiled))), file=sys.stderr)
sys.exit(code)
"""
#: What `pkm.load` compiles (pkm.algorithms.limb.build_limb: the reference geometry, always compiled).
LOAD = {"relative_poses_into", "poses_into", "jacobians_into", "cut_jacobian_into", "distance_jacobian_into"}


@pytest.mark.parametrize("args", [["eom", "robots/delta_3r2us.toml", "--at", "0.05", "0", "-0.9", "--velocity", "0.1",
                                   "0", "0", "--json"],
                                  ["ik", "robots/hexapod_6ups.toml", "--at", "0.05", "0", "0.02", "0.01", "0", "2.02"],
                                  ["info", "robots/irsbot2.toml"]])
def test_single_point_commands_compile_only_what_load_does(tmp_path, args):
    """With an empty numba cache, the single-point commands compile nothing beyond what `pkm.load`
    compiles (benchmarks/bench_startup.py: a first `pkm eom` ~2 s instead of ~5.5 s)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT), PKM_COMPILE_MESSAGE="0")
    p = subprocess.run([sys.executable, "-c", CHILD, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("COMPILED"), p.stderr
    compiled = set(last.split()[1].split(",")) if len(last.split()) > 1 else set()
    assert compiled <= LOAD, compiled - LOAD
    if args[0] == "eom":   # and prints the compiled path's terms
        doc = json.loads(p.stdout)
        robot = pkm.load(ROOT / args[1])
        ref = robot.eom(np.array(doc["x"]), np.array(doc["velocity"]))
        for key in ("M_t", "C_t_V_t", "W_t_grav", "J_IK", "M_a"):
            close(doc[key], getattr(ref, key))
