"""The members of :func:`pkm.sim.batch.simulate_batch` in SIMD lanes (issue 32.2): ``W`` members per
call of :func:`pkm.kernels.simd_forward_rk4.rk4_lanes`, the calls shared out to the batch's threads.

**Where it applies** (:func:`lane_groups`): every limb of the robot has a constant ``H`` (paper
Sec. 3.3; the Delta, the linear Delta, …) or is general with loops of at most ``GJ`` = 6 rows
(:func:`general_fits`: the 3R[2US] Delta's U-S loops, the IRSBot-2;
:mod:`pkm.kernels.simd_forward_general`), and no joint terms (armature, friction), ``max_iter ≥ 1``;
members are grouped by their limbs' data (kinematics and limb inertias, the packed ``mf``): a lane
call holds members of one group, each with its own state, forces, platform inertia (``payloads``,
or robots differing in the platform only) and IK start. A remainder of a group smaller than
:func:`min_members`, and every member of a robot the lanes do not take, runs the scalar kernel as
before (:class:`pkm.sim.batch._Lane`).
``lanes=False`` in ``simulate_batch`` (or ``PKM_BATCH_LANES=0``) forces the scalar path for
every member.

**Results.** Each member's motion equals its run alone (``robot.simulate(..., method="RK4",
form="task")``) to rounding (the lanes contract other products into FMAs and take some sines fresh
instead of by the series: ~1e-15 relative per stage), not to the bit; failures (IK, singularities,
crossings) are the scalar kernel's own: a lane that the SIMD state does not evaluate runs that stage
on the scalar kernel (which may recover), and a member that fails there is run again alone on the
scalar kernel (:class:`pkm.sim.batch._Lane`), so that its status, time and message are the bits of
its run without lanes (near a failure an IK's residual depends on the last bits of the state); so is
a member found beyond a joint limit or overflowed at its outputs (the message prints its state).
"""
from __future__ import annotations

import os

import numpy as np

from pkm.errors import InputError
from pkm.kernels.inverse_dynamics import PREDICT_LIMIT
from pkm.kernels.model import LAY_DMAX, LAY_LMAX, LAY_LOOPS, LI_AFF, LI_NLOOP, LP_M, LP_SIZE, has_joint_terms
from pkm.kernels.simd_forward import fs_rows
from pkm.kernels.simd_forward_rk4 import rk4_lanes
from pkm.kernels.simd_kernel import SMP_ROWS
from pkm.kernels.simd_general import GJ, vg_rows_after
from pkm.kernels.simd_pipeline import static_shape, vm_rows
from pkm.kernels.simd_vec import aligned_zeros, lanes
from pkm.kernels.work import BW_SIZE, make_work
from pkm.sim import task as _task
from pkm.sim.forward import ForwardKernel, pass_blocks
from pkm.sim.task import translational_axes

__all__ = ["plan", "lanes_apply", "lane_groups", "min_members", "LaneRunner"]


def plan(robot, lanes_arg, solver, members):
    """``(W, units)``: the lane width (0: none) and the units of work of a batch, its lane calls
    (:func:`lane_groups`) and then every other member alone (a one-line InputError for a bad ``lanes``
    or ``PKM_BATCH_LANES``)."""
    width = lanes_apply(robot, lanes_arg, solver)
    B = members.B
    units = lane_groups(members, width, [b for b in range(B) if b not in members.failed]) if width else []
    laned = {b for g in units for b in g}
    return width, units + [[b] for b in range(B) if b not in laned]


def lanes_apply(robot, lanes_arg, solver) -> int:
    """The lane width to run ``robot``'s members with, or 0 for the scalar path: ``lanes_arg`` None (the
    default: ``PKM_BATCH_LANES`` if set — 0 for off, 2, 4 or 8 — else the machine's SIMD width,
    :func:`pkm.kernels.simd_width.simd_width`), False, True or a width 2, 4 or 8."""
    if lanes_arg is None:
        env = os.environ.get("PKM_BATCH_LANES", "").strip()
        if env and env not in ("0", "2", "4", "8"):
            raise InputError(f"PKM_BATCH_LANES={env!r}: must be 0 (off), 2, 4 or 8")
        lanes_arg = None if not env else (False if env == "0" else int(env))
    elif not (isinstance(lanes_arg, (bool, np.bool_)) or (isinstance(lanes_arg, (int, np.integer))
                                                          and int(lanes_arg) in (2, 4, 8))):
        raise InputError(f"lanes must be None, True, False or a width 2, 4 or 8, got {lanes_arg!r}")
    if isinstance(lanes_arg, (bool, np.bool_)):
        lanes_arg = "machine" if lanes_arg else False
    km = robot._packed()
    if lanes_arg is False or not general_fits(km) or has_joint_terms(km) or solver.get("max_iter", 50) < 1:
        return 0
    if lanes_arg in (None, "machine"):
        from pkm.kernels.simd_width import simd_width
        return int(simd_width())
    return int(lanes_arg)


def general_fits(km) -> bool:
    """Whether the lanes take the limbs of :class:`pkm.kernels.model.KernelModel` ``km``: every limb has a
    constant ``H``, or its loops have at most ``GJ`` = 6 rows each (a general limb,
    :mod:`pkm.kernels.simd_forward_general`; every cut joint has, :data:`pkm.algorithms.constraints.CUT_TYPES`)."""
    lay = km.lay
    return all(km.mi[l, LI_AFF] or km.mi[l, lay[LAY_LOOPS] + LP_SIZE * lp + LP_M] <= GJ
               for l in range(km.mi.shape[0]) for lp in range(km.mi[l, LI_NLOOP]))


def min_members(width) -> int:
    """The fewest members a lane call takes: ``max(3, W // 2)``. A call costs ``W`` lanes whatever the
    members in it (the Delta: 8 lanes ≈ 3 members alone on the scalar kernel), so a smaller remainder
    of a group runs on the scalar kernel (as do batches of one or two members: the scalar path's bits)."""
    return max(3, width // 2)


def lane_groups(members, width, order):
    """The lane calls: lists of member indices (from ``order``), the members of a list sharing their
    limbs' data, ``min_members(W) … W`` of them; the members in none run on the scalar kernel."""
    keys, groups = {}, {}
    for b in order:
        r = members.robots[members.robot_of[b]]
        k = id(r)
        if k not in keys:   # (and their gravity: one g0 per lane call)
            keys[k] = r._packed().mf.tobytes() + np.asarray(r.spec.gravity, dtype=float).tobytes()
        groups.setdefault(keys[k], []).append(b)
    units = []
    for g in groups.values():
        units += [g[i:i + width] for i in range(0, len(g), width)]
    return [g for g in units if len(g) >= min_members(width)]


class LaneRunner:
    """One thread's scratch for ``W`` lanes of ``robot``'s structure (the scalar scratch stacked per lane
    and the SIMD rows of :mod:`pkm.kernels.simd_forward`)."""

    def __init__(self, robot, gravity, solver, T, keep, members, width):
        self.k = ForwardKernel(robot, gravity, hold=False, **solver)
        self.T, self.keep, self.m, self.W = T, keep, members, width
        km = self.km = robot._packed()
        d, na = robot.task_dof, robot.n_act
        L, nmax = self.k.th.shape
        dmax = int(km.lay[LAY_DMAX])
        W = width
        self.passes = [np.ascontiguousarray(np.repeat(a[None], W, axis=0)) for a in pass_blocks(km, d, na)]
        self.work = list(make_work(km, W))
        self.S, self.lanes = static_shape(km), lanes(W)
        self.axes = translational_axes(robot)
        self.act = robot._act_limb.astype(np.int64), robot._act_var.astype(np.int64)
        self.TH = aligned_zeros(L * nmax, W)
        self.VB = aligned_zeros(nmax * BW_SIZE, W)
        vm = vg_rows_after.py_func(vm_rows.py_func(nmax, dmax)[-1], nmax, dmax, int(km.lay[LAY_LMAX]))[-1]
        self.VM = aligned_zeros(vm, W)   # (with the general limbs' rows, simd_general.vg_rows)
        self.SMP = aligned_zeros(SMP_ROWS, W)
        self.FS = aligned_zeros(fs_rows.py_func(L, nmax, dmax, d, na)[-1], W)
        c = _task.CHUNK_STEPS
        self.Y, self.theta = np.empty((W, c + 1, 2 * d + 1)), np.empty((W, c, L, nmax))
        self.rates, self.scratch = np.zeros((W, 2, L, nmax)), np.zeros((W, 6, 2 * d + 1))
        self.u, self.status, self.dead = np.zeros((W, na)), np.zeros((W, 4)), np.zeros(W, np.int64)
        #: stages per lane slot evaluated in the lanes and on the scalar kernel (a diagnostic)
        self.counts = np.zeros((W, 2), np.int64)

    def run(self, group, out, limits, bar, lane, quiet):
        """Members ``group`` (≤ W, one limb group) into their rows of ``out``; ``lane`` (a
        :class:`pkm.sim.batch._Lane`) forms their outputs and runs a failed member again (``quiet``: a
        progress bar that shows nothing)."""
        m, T, keep, W = self.m, self.T, self.keep, self.W
        n, d = len(T) - 1, self.k.robot.task_dof
        robots = [m.robots[m.robot_of[b]] for b in group]
        tables = [m.tables[m.table_of[b]] for b in group]
        K = max(len(tb) for tb, _ in tables) - 1
        na = self.u.shape[1]
        TB, UC = np.zeros((W, K + 1)), np.zeros((W, 4, K, na))
        NK = np.ones(W, np.int64)
        Mps, R0s, local0s = np.zeros((W, 1, 10)), np.zeros((W, 3, 3)), np.zeros((W, 3))
        th = self.work[0]
        th[:] = 0.0
        self.rates[:] = 0.0
        self.scratch[:] = 0.0
        self.status[:] = (-1, 0, 0, 0)
        self.dead[:] = 1
        self.counts[:] = 0
        for a in self.passes[:1] + self.passes[3:]:
            a[...] = 0.0
        Y = self.Y
        for j, (b, r, (tb, uc)) in enumerate(zip(group, robots, tables)):
            TB[j, :len(tb)], UC[j, :, :len(tb) - 1], NK[j] = tb, uc, len(tb) - 1
            Mps[j], R0s[j], local0s[j] = r._packed().Mp, r.R0, r.R0.T @ r.r0
            for i, ts in enumerate(r._check_start(m.start)):
                th[j, i, :len(ts)] = ts
            Y[j, 0, :d], Y[j, 0, d:2 * d], Y[j, 0, 2 * d] = m.x0[b], m.xd0[b], 0.0
            self.dead[j] = 0
        km, k = self.km, self.k
        lane.use_gravity(robots[0])   # the group's gravity (lane_groups: the same in every member) …
        k.g0[:] = lane.k.g0
        mf = robots[0]._packed().mf   # … and limbs
        L, nmax = th.shape[1:]
        rows = [[] for _ in group]
        thetas = [np.empty((len(keep), L, nmax)) for _ in group]
        nxt = [0] * len(group)
        running = list(range(len(group)))
        c = _task.CHUNK_STEPS
        for a in range(0, n + 1, c):
            e = min(a + c, n + 1)
            rk4_lanes(a, e, n, T, km.mi, mf, km.lay, Mps, km.d_static, km.dp_static, R0s, local0s, self.axes, TB, UC,
                      NK, k.g0, *self.passes, *self.work, k.general, *k.args, k.jik, *self.act, PREDICT_LIMIT, Y, self.theta,
                      self.rates, self.scratch, self.u, self.status, self.dead, self.counts, self.TH, self.VB, self.VM, self.SMP,
                      self.FS, self.S, self.lanes)
            for j in list(running):
                failed = self.status[j, 0] != 0
                last = int(self.status[j, 1]) if failed else e
                while nxt[j] < len(keep) and keep[nxt[j]] < last:
                    rows[j].append(Y[j, keep[nxt[j]] - a].copy())
                    thetas[j][nxt[j]] = self.theta[j, keep[nxt[j]] - a]
                    nxt[j] += 1
                if failed:   # the member alone on the scalar kernel: its failure reported exactly as without lanes
                    bar.update(n + 1 - a)
                    running.remove(j)
                    rows[j] = []
                    lane.run(group[j], out, limits, quiet)
                else:
                    bar.update(e - a)
            if e <= n:
                Y[:, 0] = Y[:, e - a]
        for j, b in enumerate(group):
            if rows[j]:
                lane._outputs(b, robots[j], np.array(rows[j]), thetas[j][:len(rows[j])], out, limits)
                if out.status[b] != "ok":   # a joint limit or an overflow at an output: alone, for the scalar bits
                    for name in ("x", "xd", "q_act", "qd_act", "work", "energy_error", "closure", "t_fail"):
                        getattr(out, name)[b] = np.nan
                    out.status[b], out.message[b] = "ok", ""
                    lane.run(b, out, limits, quiet)

