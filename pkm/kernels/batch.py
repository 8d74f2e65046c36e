"""Batched inverse kinematics + inverse dynamics of a PKM (paper Sec. 8.2, eq. 137–140, 144; Sec. 8.3): the Python side.

:func:`inverse_dynamics_batch` (what :meth:`pkm.robot.Robot.inverse_dynamics` runs) checks the
input, computes the target platform states and the continuation poses of each chunk's cold start,
runs the numba kernel of :mod:`pkm.kernels.inverse_dynamics` on the robot's
:class:`pkm.kernels.model.KernelModel` (:func:`pack`, joint frames) on one thread per chunk, and
turns a failure status into :class:`pkm.IKError` or :class:`pkm.SingularityError` naming the
sample. The kernel computes exactly what :mod:`pkm.algorithms.manipulator` computes (to 1e-12).

A trajectory is cut into segments of :func:`segment_length` samples, each started cold: the length
follows from N, the lane count and numba's thread-pool size (``SPLIT``, fixed when the process
starts), never from the ``threads`` argument, so the result is the same bits for any ``threads``.
"""

from __future__ import annotations

import math
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from threading import Lock

import numpy as np
from numba import config as numba_config
from numba import get_num_threads

from pkm.algorithms.distribution import check_preload, distribute
from pkm.algorithms.inverse_kinematics import (BRANCH_STEP, BRANCH_STEPS, CONTINUATION_STEPS, SAME_SOLUTION,
                                               branch_event, check_branch_policy, check_solver, explained, fmt_x)
from pkm.algorithms.limb import SINGULARITY_THRESHOLD
from pkm.errors import IKError, InputError, PkmError, SingularityError
from pkm.kernels.inverse_dynamics import (IK_FAILED, LOOP_FAILED, OK, SINGULAR_GY, SINGULAR_JIK, SINGULAR_LP, Results,
                                          Samples, infer_steps_into, make_work, run_range, scan_samples)
from pkm.kernels.platform import rotational_states, translational_states_into
from pkm.kernels.model import LAY_NMAX, LI_AFF, LOOP_TOL, KernelModel, pack

__all__ = ["distribute_forces", "pack", "KernelModel", "LOOP_TOL", "inverse_dynamics_batch", "platform_states",
           "infer_steps", "segment_length", "SEGMENT", "SEGMENT_MAX", "SPLIT", "PATHS", "OK",
           "IK_FAILED", "LOOP_FAILED", "SINGULAR_GY", "SINGULAR_LP", "SINGULAR_JIK"]


def platform_states(robot, X, XD, XDD, out=None):
    """Target platform poses ``C_p`` (N,4,4), twists ``V_p`` and ``V̇_p`` (N,6) for task samples.

    Without a rotational component the platform keeps ``R_0`` and ``V_p = (0; R_0ᵀ R_0 ṗ) = (0; ṗ)``
    in the platform's reference axes (numba: :func:`pkm.kernels.platform.translational_states_into`);
    with rotations (:func:`pkm.kernels.platform.rotational_states`) ``R_p = R_0 exp(ρ)``,
    ``ω = dexp_{−ρ} ρ̇``, ``v = exp(ρ)ᵀ l̇`` and their derivatives as :meth:`pkm.robot.Robot.platform_twist`. ``out``: three C-contiguous float
    arrays of those shapes to fill (default: new ones).
    """
    N = X.shape[0]
    Cd, Vp, dVp = out if out is not None else blocks((N, 4, 4), (N, 6), (N, 6))
    if not (Cd.flags.c_contiguous and Cd.shape == (N, 4, 4)):  # filled in place, read by the kernels
        raise ValueError(f"out: the poses must be a C-contiguous ({N}, 4, 4) array, got shape {Cd.shape}")
    if not robot._rot:  # one numba pass (numpy's strided copies cost ~0.02 µs per sample of the Delta)
        axis = np.array(["xyz".index(c[1]) for c in robot.task.components], np.int64)
        translational_states_into(_readonly(X), _readonly(XD), _readonly(XDD), axis, _readonly(robot.R0),
                                  robot.R0.T @ robot.r0, Cd, Vp, dVp)
        return Cd, Vp, dVp
    rotational_states(robot, X, XD, XDD, Cd, Vp, dVp)
    return Cd, Vp, dVp


#: Largest relative residual ``|Δx − h v̄ − h² c| / |Δx|`` of the Hermite relation at which an
#: inferred time step is used (:func:`infer_steps`); beyond it (a corner, a jump, samples too far
#: apart for the relation) the step counts as unknown.
HERMITE_FIT = 1e-3


def _readonly(a):
    """``a`` as a C-contiguous float64 array that numba types as read-only (a view of it when it
    is one already: no copy). The kernel only reads it, and a read-only array is another numba
    type than a writable one: a caller passing a trajectory's frozen arrays and one passing its
    own compiled :func:`pkm.kernels.platform.translational_states_into` twice."""
    v = np.ascontiguousarray(a, dtype=float).view()
    v.flags.writeable = False
    return v


def infer_steps(X, XD, XDD, out):
    """Time steps ``h_s = t_s − t_{s−1}`` (``s = 1 … N − 1``) into ``out`` (N − 1,) inferred from the
    samples alone, for the IK's predicted starts when no times are given.

    Integrating the cubic Hermite interpolant of ``ẋ`` over a step (the corrected trapezoidal rule)
    gives ``x_s − x_{s−1} = h v̄ + h² c + O(h⁵)`` with ``v̄ = (ẋ_{s−1} + ẋ_s)/2`` and ``c = (ẍ_{s−1} − ẍ_s)/12``.
    ``h`` is its least-squares solution over the task coordinates (a linear fit, then two fixed-point
    steps for the ``h²`` term); a step that is not positive and finite, or whose relation leaves
    a residual above ``HERMITE_FIT · |Δx|``, is 0 (unknown: the IK then starts from the previous
    sample's solution). A wrong step only costs Newton iterations: the start is a start. The loop
    is :func:`pkm.kernels.inverse_dynamics.infer_steps_into` (numba: 0.1 µs per sample in numpy)."""
    infer_steps_into(_readonly(X), _readonly(XD), _readonly(XDD), out, HERMITE_FIT)


def continuation_starts(robot, Xb):
    """The intermediate platform poses (len(Xb), K − 1, 4, 4) of the straight task-space lines from
    ``x_ref`` to each point of ``Xb``, as :meth:`pkm.robot.Robot.continuation_poses` (without the
    last, the target): a cold start that does not converge directly is continued along them."""
    K, dp = CONTINUATION_STEPS, Xb.shape[1]
    frac = np.arange(1, K) / K
    Xs = (robot.x_ref + frac[None, :, None] * (Xb[:, None, :] - robot.x_ref)).reshape(-1, dp)
    return _poses(robot, Xs).reshape(len(Xb), K - 1, 4, 4)


def _poses(robot, X):
    """Platform poses (N, 4, 4) at task coordinates X (N, δ_p), vectorised (:func:`platform_states`)."""
    Z = np.zeros_like(X)
    return platform_states(robot, X, Z, Z)[0]


def blocks(*shapes, pool=None):
    """Uninitialised C-contiguous float arrays of the given shapes, views of ONE allocation.

    The per-call arrays of :func:`inverse_dynamics_batch` (~0.9 kB per sample in all for the
    Delta) come as two blocks instead of a dozen arrays: glibc's malloc then keeps the freed
    memory for the next call (its mmap threshold adapts to the largest block freed, and the
    heap is trimmed only beyond twice that), so repeated calls reuse memory instead of taking a
    fresh page fault for every 4 kB (~2000 per call of 10⁴ samples of the Delta: ~20 % of its
    time per sample on a KVM guest, A/B alternated). Each array starts a multiple of 64 bytes
    after the block's start. The arrays returned to the user are views of the output block, so
    the block lives as long as any of them."""
    sizes = [math.prod(s) for s in shapes]  # math.prod: np.prod costs ~4 µs a call
    starts = np.cumsum([0] + [-(-n // 8) * 8 for n in sizes])
    total = int(starts[-1])
    if pool is None:
        block = np.empty(total)
    else:  # a list holding one flat array, reused while it is large enough (torques_stream's blocks)
        if not pool or pool[0].size < total:
            pool[:] = [np.empty(total)]
        block = pool[0][:total]
    return [block[o:o + n].reshape(s) for o, n, s in zip(starts[:-1], sizes, shapes)]


#: Shortest segment (:func:`segment_length`); the block unit of :data:`STREAM`.
SEGMENT = 256
#: Longest segment: a cold start (scalar IK from the reference configuration, ~30 µs on the 3R[2US]
#: Delta, and two samples on the scalar kernel) costs < 1 % beyond it; it bounds the time between
#: ``progress`` reports and the samples run again when a cold start lands on another branch.
SEGMENT_MAX = 4096
#: numba's thread-pool size, fixed at start (``NUMBA_NUM_THREADS``; not ``get_num_threads()`` nor
#: ``threads``: the segmentation, and so every result bit, must not depend on the thread count).
SPLIT = max(1, int(numba_config.NUMBA_NUM_THREADS))


def segment_length(N, lanes):
    """Samples per segment of an N-sample call on ``lanes`` lanes (0: the scalar kernel):
    ``min(SEGMENT_MAX, max(SEGMENT, ⌈N / (max(lanes, 1)·SPLIT)⌉))``: enough segments that each of
    ``SPLIT`` threads can get a full group of ``lanes``, few enough that their cold starts cost
    little (39 segments of 256 for N = 10⁴: 7–10 % of the SIMD path's time)."""
    return min(SEGMENT_MAX, max(SEGMENT, -(-int(N) // (max(int(lanes), 1) * SPLIT))))


#: Shortest trajectory for which ``simd=None`` (automatic) takes the SIMD path: below it the few
#: segments (of ``SEGMENT`` samples) fill few lanes, and a first run would wait for the compile.
SIMD_MIN_SAMPLES = 4 * SEGMENT


def _lane_count(km, N, simd):
    """Lanes of the SIMD path for this call, 0 for the scalar kernel: ``simd`` True (when the robot
    is supported, :func:`pkm.kernels.simd_kernel.supports`), False, an int (the width: 2, 4 or 8), or
    None: the machine's width for the robot's kind of limbs (:func:`pkm.kernels.simd_width.simd_width`,
    measured once) for trajectories of at least ``SIMD_MIN_SAMPLES``, with or without sample times."""
    if simd is False or (simd is None and N < SIMD_MIN_SAMPLES):
        return 0   # (the SIMD path not even imported: the main job's 1001 samples never load it)
    from pkm.kernels.simd_kernel import supports
    from pkm.kernels.simd_width import simd_width
    if not supports(km):
        return 0
    if simd is None or simd is True:
        return simd_width(not km.mi[:, LI_AFF].all()) if simd or N >= SIMD_MIN_SAMPLES else 0
    if int(simd) not in (2, 4, 8):
        raise ValueError(f"simd must be None, True, False or a lane count 2, 4 or 8, got {simd!r}")
    return int(simd)


#: Calls of :func:`inverse_dynamics_batch` by the path they took, since the process started (tests and
#: benchmarks read it): ``"simd"`` (segments in lanes; ``"simd<W>"`` by width), ``"scalar"`` (the scalar
#: kernel only), ``"lane_fallbacks"`` (segments whose lane stopped and ran again on the scalar kernel),
#: ``"lane_scalar_ik"`` (a lane's limb and sample whose IK the lanes handed to the scalar solver).
PATHS = Counter()
_PATHS_LOCK = Lock()

#: Most samples one call takes (the kernel's arrays hold ~1 kB per sample of the Delta).
MAX_SAMPLES = 10_000_000


def inverse_dynamics_batch(robot, X, XD, XDD, wrench=None, gravity=None, *, tol=1e-12, max_iter=50,
                           singularity_threshold=SINGULARITY_THRESHOLD, start=None, threads=None, t=None,
                           on_branch_change="warn", progress=None, sample_offset=0, simd=None, _pools=None):
    """:func:`pkm.kernels.inverse_dynamics.run_range` on samples ``X, XD, XDD`` (N, δ_p), chunks in
    parallel on threads; see :meth:`pkm.robot.Robot.inverse_dynamics`.

    ``start``: per-limb tree variables to start the first sample's IK from (default: the
    reference configuration, directly or by continuation along a straight line in task space,
    as :meth:`Robot.inverse_kinematics` does; the kernel does this itself). ``threads``: number
    of chunks run in parallel (default: numba's thread count; chunks have at least one segment
    of :func:`segment_length` samples). ``t``: sample times (N,), optional; with them each sample
    starts from a prediction from the previous two. ``progress``: a callable that receives the number of
    samples of each finished segment (called from the worker threads). Returns the raw arrays
    ``(theta, thetad, thetadd, tau, JIK, limbW, platW)``.

    The result does not depend on ``threads``: the samples are cut into segments of
    :func:`segment_length` samples (from N, this call's lane count and ``SPLIT``, numba's thread-pool
    size: not ``threads``), every segment after the first starts cold, and where its first sample
    may not continue the segment before and differs from the solution warm-started from
    it (the cold start found another branch), the segment is run again from there
    (:class:`_Run`). The branch is then followed along the trajectory (:meth:`_Run.follow_branch`).
    ``simd``: the SIMD path (:mod:`pkm.kernels.simd_kernel`) or the scalar kernel (:func:`_lane_count`;
    the same results to rounding). ``sample_offset``: index of ``X[0]`` in a longer trajectory (:func:`torques_stream`), for the
    sample numbers of errors and warnings. ``_pools``: two lists whose arrays the per-call blocks reuse
    (:func:`blocks`; :func:`torques_stream`: the returned arrays are overwritten by the next call).
    """
    robot.spec.check_actuation()  # as many actuators as task coordinates (a one-line RobotFileError)
    robot.check_dynamics()  # the kernel selects twist rows: V_p = P_p V_t
    check_solver(tol, max_iter, singularity_threshold)
    km = robot._packed()
    N = X.shape[0]
    if N == 0:
        raise InputError("x holds no samples")
    if N > MAX_SAMPLES:
        raise InputError(f"{N} samples in one call: at most {MAX_SAMPLES} (split the trajectory)")
    L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
    g0 = np.ascontiguousarray(robot.spec.gravity if gravity is None else gravity, dtype=float)
    if g0.shape != (3,) or not np.all(np.isfinite(g0)):
        raise InputError(f"gravity must be a finite 3-vector, got {' '.join(repr(g0).split())[:200]}")
    if t is not None:
        t = np.asarray(t, dtype=float)
        if t.shape != (N,) or not np.all(np.isfinite(t)):
            raise InputError(f"t must be {N} finite sample times, got shape {t.shape}")
    pools = _pools or (None, None)
    Cd, Vp, dVp, Wee, dts = blocks((N, 4, 4), (N, 6), (N, 6), (N, 6), (N,), pool=pools[0])
    platform_states(robot, X, XD, XDD, out=(Cd, Vp, dVp))
    Wee[:] = 0.0 if wrench is None else np.asarray(wrench, float)
    dts[0] = 0.0
    if t is None:
        infer_steps(X, XD, XDD, dts[1:])
    else:
        np.maximum(np.diff(t), 0.0, out=dts[1:])
    lanes = _lane_count(km, N, simd)
    bounds = np.append(np.arange(0, N, segment_length(N, lanes)), N)
    nseg = len(bounds) - 1
    workers = max(1, min(get_num_threads() if threads is None else int(threads), nseg))
    dp = robot.task_dof
    out = Results(*blocks(*[(N, L, nmax)] * 3, (N, robot.n_act), (N, robot.n_act, dp), (N, L, dp), (N, dp),
                          pool=pools[1]))
    for a in out[:3]:  # the kernel writes each limb's n_l variables; zero the padding to n_max
        for k, l in enumerate(robot.limbs):
            a[:, k, l.n:] = 0.0
    run = _Run(robot, km, X, Samples(Cd, Vp, dVp, Wee, dts, g0), out, workers, lanes,
               (float(tol), int(max_iter), float(singularity_threshold)), check_branch_policy(on_branch_change),
               sample_offset)
    first = robot._check_start(start) if start is not None else None
    # for cold starts that fail directly (not needed by a first segment that starts from `start`)
    Cs = continuation_starts(robot, X[bounds[:-1]]) if first is None or nseg > 1 else np.zeros((1, 0, 4, 4))

    def worker(w):  # run_range releases the GIL: workers on threads run in parallel
        out = []
        mine = range(w * nseg // workers, (w + 1) * nseg // workers)
        for g in range(0, len(mine), lanes or 1):
            group = mine[g:g + (lanes or 1)]
            if lanes:  # up to W segments at once in the lanes of the SIMD path
                out.extend(run.lanes(bounds, group, w, first, Cs))
            else:
                c = group[0]
                out.append(run.range(bounds[c], bounds[c + 1], w, first if c == 0 else None, Cs[c]))
            if progress is not None:
                progress(int(bounds[group[-1] + 1] - bounds[group[0]]))
        return out

    if workers == 1:
        statuses = worker(0)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            statuses = [st for sts in pool.map(worker, range(workers)) for st in sts]
    run.release_lane_work()
    with _PATHS_LOCK:
        PATHS.update({"simd": 1, f"simd{lanes}": 1, "lane_fallbacks": run.fallbacks, "lane_scalar_ik": run.scalar_ik}
                     if lanes else {"scalar": 1})
    starts = bounds[1:-1]  # each segment's first sample against the sample before, all at once
    suspect = run.suspects_at(starts) if len(starts) else np.zeros(0, bool)
    rerun = False  # after a re-run the samples before a start may have changed: check it anew
    for c in range(nseg):  # each segment continues the branch of the one before
        b = bounds[c]
        if c > 0 and (statuses[c][0] != OK and statuses[c][1] == b
                      or (run.suspects(b, b + 1)[0] if rerun else suspect[c - 1])) and not run.same_as_warm(b):
            statuses[c] = run.range(b, bounds[c + 1], 0, run.theta_at(b - 1))
            rerun = True
        if statuses[c][0] != OK:  # raises, or continues the branch past a jump to the end
            run.raise_failure(statuses[c])
            break
    run.follow_branch(1)
    run.check_finite(t)
    return tuple(out)


def distribute_forces(robot, res, weights=None, preload=None, *, threshold=SINGULARITY_THRESHOLD, previous=None,
                      sample0=0):
    """Redundant actuation (``n_act > δ_p``, paper Sec. 8.2): the kernel left ``tau`` zero and the
    task-space wrench in ``limbW + platW``; write ``u = (J_IKᵀ)⁺_W φ + N z``
    (:func:`pkm.algorithms.distribution.distribute`) into ``res``'s ``tau`` (the raw arrays of
    :func:`inverse_dynamics_batch`) and return the null-space bases ``N`` (n, n_act, r); None for a
    non-redundant robot (``preload`` is then an error, ``weights`` change nothing). ``previous``: the
    basis of the sample before ``res``'s first (streamed blocks), ``sample0`` its index."""
    r = robot.n_act - robot.task_dof
    z = check_preload(preload, res[3].shape[0], r)
    if r == 0:
        return None
    tau, N = distribute(res[4], res[5].sum(axis=1) + res[6], weights, z, threshold=threshold, previous=previous,
                        sample0=sample0)
    res[3][...] = tau
    return N


class _Run:
    """One call's kernel runs: ranges of samples from a cold or a given start, the check of a
    chunk's first sample, branch following, and the errors that name the sample."""

    def __init__(self, robot, km, X, smp, out, chunks, lanes, args, policy, s0=0):
        self.robot, self.km, self.X, self.smp, self.out, self.args = robot, km, X, smp, out, args
        if lanes:
            from pkm.kernels.simd_kernel import pooled_lane_work
            from pkm.kernels.simd_pipeline import static_shape
        self.lane_work = [pooled_lane_work(robot, km, lanes) for _ in range(chunks)] if lanes else None
        self.runs, self._scanned = 0, None  # kernel runs into self.out so far; the last scan
        self.fallbacks = 0  # segments whose lane stopped, run again on the scalar kernel
        self.scalar_ik = 0  # limb IKs of lane samples solved on the scalar path (status[j, 3])
        self.width = lanes
        self.s0 = s0  # index of sample 0 in the caller's trajectory (streamed blocks), for messages
        self.policy = policy
        self.work = make_work(km, chunks)
        self.general = None if km.mi[:, LI_AFF].all() else km.lay  # None: numba compiles the affine path only
        self.shape = static_shape(km) if lanes else None  # the sizes as compile-time constants of the SIMD path
        self._no_cs = np.zeros((0, 4, 4))
        self.cold = np.zeros(X.shape[0], bool)  # samples already solved from the reference after a jump

    def release_lane_work(self):
        """Give the SIMD scratch back to the robot's pool (:func:`_lane_work`)."""
        for w in self.lane_work or ():
            self.robot.__dict__["_lane_work_pool"][(id(self.km), self.width)].append(w)
        self.lane_work = None

    def theta_at(self, s):
        return self.per_limb(self.out.theta[s])

    def per_limb(self, theta):
        """Each limb's tree variables from an (L, n_max) array (the kernel's padding dropped)."""
        return [theta[k, :l.n].copy() for k, l in enumerate(self.robot.limbs)]

    def range(self, a, e, c, start=None, Cs=None, smp=None, out=None, args=None):
        """Samples ``a … e − 1`` on chunk ``c``'s scratch: from ``start`` (each limb's tree variables)
        or, if None, cold (the reference configuration, else continuation along ``Cs``). Returns the
        kernel's status ``(code, sample, limb, value)``."""
        status = np.zeros(4)
        if out is None:
            self.runs += 1
        w = [x[c] for x in self.work]
        if start is not None:
            for k, th0 in enumerate(start):
                w[0][k, :len(th0)] = th0
        run_range(a, e, *self.km, *(smp or self.smp), *(out or self.out), *w, start is None,
                  self._no_cs if Cs is None else Cs, self.general, *(args or self.args), status)
        return status

    def lanes(self, bounds, group, c, first, Cs):
        """Segments ``group`` (at most W) at once on the SIMD path (:func:`pkm.kernels.simd_kernel.run_lanes`)
        with chunk ``c``'s scratch; a segment whose lane stopped is run again on the scalar kernel.
        Returns each segment's status as :meth:`range`."""
        W, km = self.width, self.km
        L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
        seg_a, seg_e = np.zeros(W, np.int64), np.zeros(W, np.int64)
        cold, TH0 = np.ones(W, np.bool_), np.zeros((W, L, nmax))
        lanes_Cs = np.zeros((W,) + Cs.shape[1:])
        for j, g in enumerate(group):
            seg_a[j], seg_e[j] = bounds[g], bounds[g + 1]
            lanes_Cs[j] = Cs[g]
            if g == 0 and first is not None:
                cold[j] = False
                for k, th0 in enumerate(first):
                    TH0[j, k, :len(th0)] = th0
        status = np.zeros((W, 4))
        self.runs += 1
        w = [x[c] for x in self.work]
        from pkm.kernels.simd_kernel import LANE_FAILED, run_lanes
        from pkm.kernels.simd_vec import lanes as simd_lanes

        run_lanes(seg_a, seg_e, cold, TH0, lanes_Cs, *self.km, *self.smp, *self.out, *w, *self.args, status,
                  *self.lane_work[c], self.general, simd_lanes(W), self.shape)
        out = []
        self.scalar_ik += int(status[status[:, 0] != LANE_FAILED, 3].sum())  # (a failed lane's [3]: its value)
        for j, g in enumerate(group):
            if status[j, 0] == LANE_FAILED:
                self.fallbacks += 1
                out.append(self.range(bounds[g], bounds[g + 1], c, first if g == 0 else None, Cs[g]))
            else:
                out.append(status[j])
        return out

    def suspects(self, a, e):
        """Which of the samples ``a … e − 1`` (a ≥ 1) may not continue their predecessor's branch: a joint
        step above ``BRANCH_STEP`` or a J_IK row turned by more than 90° (the rule of
        :func:`pkm.algorithms.inverse_kinematics.branch_suspect`, vectorised)."""
        return (self.scan(a, e) & 1).astype(bool)

    def scan(self, a, e):
        """:func:`pkm.kernels.inverse_dynamics.scan_samples` of samples ``a … e − 1`` (a ≥ 1); the scan of
        ``1 … N − 1`` is kept until the outputs change (:meth:`range`, :meth:`lanes`), so that the
        branch check and the finiteness check share it."""
        o = self.out
        key = (a, e, self.runs)
        if self._scanned is not None and self._scanned[0] == key:
            return self._scanned[1]
        flags = np.zeros(max(e - a, 0), np.int64)
        if e > a:
            scan_samples(o.theta, o.JIK, o.tau, o.thetad, o.thetadd, a, e, BRANCH_STEP, flags)
        self._scanned = (key, flags)
        return flags

    def suspects_at(self, idx):
        """:meth:`suspects` for the samples ``idx`` (each ≥ 1) against the sample before each."""
        th, J = self.out.theta, self.out.JIK
        step = np.abs(th[idx] - th[idx - 1]).max(axis=(1, 2)) > BRANCH_STEP
        return step | (np.einsum("sad,sad->sa", J[idx], J[idx - 1]) <= 0.0).any(axis=1)

    def same_as_warm(self, b):
        """Whether sample ``b``'s solution (a chunk's cold start) is the one found from sample ``b − 1``."""
        smp = Samples(*(a[b - 1:b + 1] for a in self.smp[:5]), self.smp.g0)
        out = Results(*(np.zeros_like(a[b - 1:b + 1]) for a in self.out))
        status = self.range(1, 2, 0, self.theta_at(b - 1), smp=smp, out=out)
        return status[0] == OK and _close(out.theta[1], self.out.theta[b])

    def follow_branch(self, s0):
        """From sample ``s0`` on, find the samples whose solution may not continue its predecessor's
        branch (:meth:`suspects`) and check each by continuation from the predecessor; where the
        continued solution differs (a jump), solve again from it; where there is none, the branch
        changes (:func:`branch_event` for both). The scan is redone only after a re-run."""
        N = self.X.shape[0]
        hits = list(s0 + np.flatnonzero(self.suspects(s0, N))) if s0 < N else []
        while hits:
            s = int(hits.pop(0))
            if self.cold[s]:  # solved from the reference after a failure: already reported
                continue
            cont, _ = self.continue_to(s)
            if cont is None:
                branch_event("changed", self.robot.name, self.s0 + s, self.X[s - 1], self.X[s], self.policy, stacklevel=5)
            elif not _close(cont, self.out.theta[s]):
                branch_event("continued", self.robot.name, self.s0 + s, self.X[s - 1], self.X[s], stacklevel=5)
                status = self.range(s, N, 0, self.per_limb(cont))
                self.raise_failure(status if status[0] != OK else None)
                hits = list(s + 1 + np.flatnonzero(self.suspects(s + 1, N))) if s + 1 < N else []

    def continue_to(self, s):
        """Tree variables (L, n_max) at sample ``s``, continued from sample ``s − 1``'s along a straight
        line in task space, and the kernel's status (the solution is None where it failed)."""
        robot, K = self.robot, BRANCH_STEPS
        xs = self.X[s - 1] + np.arange(1, K + 1)[:, None] / K * (self.X[s] - self.X[s - 1])
        Cd = _poses(robot, xs)
        z6 = np.zeros((K, 6))
        smp = Samples(Cd, z6, z6.copy(), z6.copy(), np.zeros(K), self.smp.g0)
        out = Results(*(np.zeros((K,) + a.shape[1:]) for a in self.out))
        tol, max_iter, _ = self.args
        status = self.range(0, K, 0, self.theta_at(s - 1), smp=smp, out=out, args=(tol, max_iter, np.inf))
        return (out.theta[K - 1] if status[0] == OK else None), status

    def _limb(self, status):
        return self.robot.limbs[int(status[2])].name if status[2] >= 0 else None

    def raise_failure(self, status):
        """:class:`pkm.IKError` or :class:`pkm.SingularityError` for a failed kernel status (global
        sample index); a failure after the first sample is first retried by continuation from the
        sample before (a jump), with a :class:`pkm.BranchWarning`."""
        if status is None:
            return
        code, s, value = int(status[0]), int(status[1]), status[3]
        tol, max_iter, thresh = self.args
        limb = self._limb(status)
        where = f"sample {self.s0 + s} (x = {fmt_x(self.X[s])})"
        if code in (IK_FAILED, LOOP_FAILED):
            cont = self.continue_to(s)[0] if s > 0 else None  # a jump? continue along a straight line
            if cont is not None:
                branch_event("continued", self.robot.name, self.s0 + s, self.X[s - 1], self.X[s], stacklevel=5)
                status = self.range(s, self.X.shape[0], 0, self.per_limb(cont))
                return self.raise_failure(status if status[0] != OK else None)
            if s > 0 and not self.cold[s]:  # as the reference IK does: from the reference configuration
                self.cold[s] = True
                status = self.range(s, self.X.shape[0], 0, None, continuation_starts(self.robot, self.X[s:s + 1])[0])
                if status[0] != OK and int(status[1]) == s:
                    return self.raise_failure(status)
                branch_event("changed", self.robot.name, self.s0 + s, self.X[s - 1], self.X[s], self.policy, stacklevel=5)
                return self.raise_failure(status if status[0] != OK else None)
            what = "no inverse-kinematics solution" if code == IK_FAILED else "the loops cannot be closed"
            exc = IKError(f"limb {limb!r}: {what} at {where}: residual {value:.3e} with at most {max_iter} Newton "
                          "iterations (target unreachable?)", limb=limb, residual=float(value), iterations=max_iter,
                          sample=self.s0 + s)
            if code == IK_FAILED and status[2] >= 0:   # the mechanism's fault rather than the target's?
                exc = explained(exc, self.robot.limbs[int(status[2])], self.robot.platform_pose(self.X[s]), self.robot)
            raise exc
        what = {SINGULAR_GY: f"limb {limb!r}: G_y", SINGULAR_LP: f"limb {limb!r}: the platform Jacobian L_p",
                SINGULAR_JIK: "the IK Jacobian J_IK"}[code]
        raise SingularityError(f"{what} is ill conditioned at {where} (condition number {value:.3e} > "
                               f"{thresh:.1e})", condition=float(value), threshold=thresh, sample=self.s0 + s)

    def check_finite(self, t=None):
        """:class:`pkm.PkmError` naming the first sample (and its time ``t[s]``) whose torques or joint
        rates are not finite."""
        o = self.out
        first = 0 if np.isfinite(o.tau[0]).all() and np.isfinite(o.thetad[0]).all() and np.isfinite(o.thetadd[0]).all() \
            else -1
        bad = np.flatnonzero(self.scan(1, o.tau.shape[0]) & 6) + 1 if first == 0 else [0]
        if len(bad):
            s = int(bad[0])
            what = "actuator torque" if not np.isfinite(o.tau[s]).all() else "joint rates"
            when = f" (t = {t[s]:.6g} s)" if t is not None else ""
            raise PkmError(f"{self.robot.name}: non-finite {what} at sample {self.s0 + s}{when} at x = {fmt_x(self.X[s])}: "
                           "velocities, accelerations, gravity or masses too large for float64")


def _close(a, b):
    return bool(np.max(np.abs(a - b)) <= SAME_SOLUTION)
