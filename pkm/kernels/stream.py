"""Actuator forces of a trajectory of any length in bounded memory (issue 18, item 3): :func:`torques_stream`
runs :func:`pkm.kernels.batch.inverse_dynamics_batch` on blocks of ``STREAM`` samples, each started from the
previous block's last solution, and reuses the blocks' arrays (:func:`pkm.kernels.batch.blocks`)."""

from __future__ import annotations

import numpy as np

from pkm.algorithms.limb import SINGULARITY_THRESHOLD
from pkm.kernels.batch import SEGMENT, distribute_forces, inverse_dynamics_batch

__all__ = ["torques_stream", "STREAM"]


#: Samples per block of :func:`torques_stream` (each block one call, in :func:`pkm.kernels.batch.segment_length`
#: segments): its per-block arrays (~1 kB per sample of the Delta) are ~16 MB whatever N.
STREAM = 64 * SEGMENT


def torques_stream(robot, X, XD, XDD, wrench=None, gravity=None, *, out=None, t=None, start=None, progress=None,
                   weights=None, preload=None, **options):
    """Actuator forces only (N, n_act), computed in blocks of ``STREAM`` samples so that the memory
    does not grow with N (issue 18: N = 10⁷ in bounded memory); ``out``: a C-contiguous float
    array (N, n_act) to fill (default: a new one). Block ``b`` is :func:`inverse_dynamics_batch` on
    samples ``a − 1 … a + STREAM − 1`` started from sample ``a − 1``'s solution of the block before, so
    that its first sample is checked against (and continues the branch of) its predecessor exactly
    as inside a block. ``options``: the rest of :func:`inverse_dynamics_batch`'s keywords. Redundant
    actuation: ``weights`` and ``preload`` (None, r numbers or (N, r)) as for
    :func:`pkm.kernels.batch.distribute_forces`, the null-space basis continued from block to block."""
    N, na = X.shape[0], robot.n_act
    if out is None:
        out = np.empty((N, na))
    elif not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.shape == (N, na)
              and out.flags.c_contiguous and out.flags.writeable):
        raise ValueError(f"out must be a writeable C-contiguous float64 array of shape ({N}, {na}), got "
                         f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
    W = None if wrench is None else np.asarray(wrench, float)
    per_sample = W is not None and W.ndim == 2
    a, th, basis = 0, start, None
    pools = ([], [])  # the blocks' arrays, allocated once: no fresh pages to fault in for every block
    while a < N:
        lo, b = max(a - 1, 0), min(a + STREAM, N)
        report = progress
        if progress is not None and lo < a:  # the overlapping sample was reported with the block before
            report = _minus_one(progress)
        res = inverse_dynamics_batch(robot, X[lo:b], XD[lo:b], XDD[lo:b], W[lo:b] if per_sample else W, gravity,
                                     t=None if t is None else t[lo:b], start=th, progress=report, sample_offset=lo,
                                     _pools=pools, **options)
        z = None if preload is None or np.ndim(preload) < 2 else preload[lo:b]
        basis = distribute_forces(robot, res, weights, preload if z is None else z, previous=basis, sample0=lo,
                                  threshold=options.get("singularity_threshold", SINGULARITY_THRESHOLD))
        basis = None if basis is None else basis[-1]
        out[a:b] = res[3][a - lo:]
        th = [res[0][-1, k, :limb.n].copy() for k, limb in enumerate(robot.limbs)]
        a = b
    return out


def _minus_one(progress):
    """``progress`` with one sample fewer in its first report (thread-safe)."""
    import threading

    lock, owed = threading.Lock(), [1]

    def report(n):
        with lock:
            k, owed[0] = min(owed[0], n), owed[0] - min(owed[0], n)
        if n - k:
            progress(n - k)
    return report
