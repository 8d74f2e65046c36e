"""Weighted least-squares estimate of the base parameters from measured motions and actuator forces.

Data: CSV files as ``pkm inverse-dynamics --out`` writes them — ``t``, the task coordinates, their
rates (suffix ``d``, optional), accelerations (suffix ``dd``, optional), ``q_<actuator> [unit]`` and
``tau_<actuator> [unit]`` (SI units: :func:`pkm.trajectory.files.column_name`) — so a logged motion and pkm's own output are read alike. Rates and accelerations absent from the file
come from the positions (the rates) by a **zero-phase** Savitzky–Golay derivative
(``scipy.signal.savgol_filter``, cubic, symmetric window of :data:`WINDOW` samples: no delay; the
samples must be equally spaced). The measured actuator positions are checked against the IK of the
measured task coordinates (a different robot or branch is refused).

Redundant actuation (``n_act > δ_p``): the measured forces hold an internal part (preload, any
distribution) that the parameters do not determine; the fit uses the task wrench they produce,
``J_IKᵀ τ = J_IKᵀ Y_b β`` (eq. 140; ``J_IKᵀ (J_IKᵀ)⁺ = 1``), so the weights are per task coordinate.

Estimate: ``β̂ = argmin Σ_a Σ_s (τ_as − (Y_b β)_as)² / σ_a²`` with the per-actuator noise ``σ_a``
estimated from the residual of the ordinary least-squares fit (iterated once); the covariance
``cov β̂ = (Y_bᵀ Σ⁻¹ Y_b)⁻¹`` gives the standard deviations.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pkm.errors import AccuracyWarning, InputError, PkmError
from pkm.trajectory.files import column_name, csv_lines

#: Samples of the Savitzky–Golay window (odd) for the rates and accelerations.
WINDOW = 9
#: The second window of the derivative filter: where rates or accelerations come from the filter, the estimate is
#: repeated with this one, and each parameter's change joins its ± (:attr:`Estimate.uncertainty`). The noise's ±
#: alone said ``b3 = 189.66 ± 13.9`` (true −0.039) for a motion that barely excited it: the filter's error, which
#: a weakly excited parameter amplifies by the regressor's condition number (3.8e8 there), is not in it.
WIDE_WINDOW = 17
#: A fit that explains less of an actuator's measured torque variance than this is refused: torques of pure noise
#: gave parameters with ± and a written robot file (a 0.049 kg platform, its COM 3.3 m off), exit status 0.
MIN_EXPLAINED = 0.5
#: The residual RMS above this multiple of the torques' own high-pass noise (their second difference / √6): a
#: warning that the model does not explain the data (a +20 N offset: 125–230 ×; swapped columns: 55–660 ×; good
#: data: 0.01–1 ×).
MODEL_ERROR = 5.0
#: A parameter whose ± (noise and filter) exceeds this fraction of its typical size (its body's mass and size,
#: :func:`pkm.identification.parameters.parameter_scales`) is not determined by the data: a warning.
UNDETERMINED = 0.5
#: Largest |q_measured − q_IK| accepted [rad or m].
Q_TOL = 1e-3


class Data(NamedTuple):
    """Measured samples: ``t`` (N,), ``x``, ``xd``, ``xdd`` (N, δ_p), ``q`` and ``tau`` (N, n_act);
    ``derived``: what was derived by the filter (for the report); ``filtered``: what the filter derived,
    ``""``, ``"accelerations"`` or ``"rates and accelerations"``."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    q: np.ndarray
    tau: np.ndarray
    derived: str
    filtered: str = ""


def read_data(robot, path) -> Data:
    """One data CSV (module docstring); a defect raises a one-line :class:`pkm.InputError`."""
    path, lines = csv_lines(path, "data file")
    rows = [ln for _, ln in lines]
    if not rows:
        raise InputError(f"{path}: empty data file (expected a header t, task coordinates, q_…, tau_…)")
    header = [column_name(path, lines[0][0], c) for c in rows[0].split(",")]
    names = robot.task.coordinate_names()
    need = ["t", *names, *(f"q_{a}" for a in robot.actuator_names), *(f"tau_{a}" for a in robot.actuator_names)]
    missing = [c for c in need if c not in header]
    if missing:
        raise InputError(f"{path}: missing column {missing[0]!r} (a data file has t, the task coordinates "
                         f"{', '.join(names)}, q_<actuator> and tau_<actuator> columns for {robot.name!r})")
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        raise InputError(f"{path}: duplicate column {dup[0]!r}")
    values = []
    for k, ln in enumerate(rows[1:]):
        fields = ln.split(",")
        if len(fields) != len(header):
            raise InputError(f"{path}: data row {k + 1} has {len(fields)} values, the header {len(header)} columns")
        try:
            values.append([float(v) for v in fields])
        except ValueError:
            raise InputError(f"{path}: data row {k + 1}: a value is not a number") from None
    data = np.array(values, dtype=float).reshape(len(values), len(header))
    if data.ndim != 2 or data.shape[0] < 2 * WINDOW or data.shape[1] != len(header):
        raise InputError(f"{path}: expected at least {2 * WINDOW} rows of {len(header)} numbers, got "
                         f"{data.shape[0] if data.ndim == 2 else 0}")
    if not np.all(np.isfinite(data)):
        raise InputError(f"{path}: NaN or inf in the data")
    col = {c: k for k, c in enumerate(header)}
    t = data[:, col["t"]]
    dt = np.diff(t)
    if not (np.all(dt > 0) and np.ptp(dt) <= 1e-6 * np.mean(dt)):
        raise InputError(f"{path}: the samples must be equally spaced in t (the zero-phase filter needs it)")
    h = float(np.mean(dt))
    x = data[:, [col[n] for n in names]]
    derived = "accelerations"
    if all(f"{n}d" in col for n in names):
        xd = data[:, [col[f"{n}d"] for n in names]]
    else:
        xd = _derivative(x, h, 1)
        derived = "rates and accelerations"
    if all(f"{n}dd" in col for n in names) and derived == "accelerations":
        xdd = data[:, [col[f"{n}dd"] for n in names]]
        derived = ""
    else:
        xdd = _derivative(xd, h, 1)
    q = data[:, [col[f"q_{a}"] for a in robot.actuator_names]]
    tau = data[:, [col[f"tau_{a}"] for a in robot.actuator_names]]
    how = f"{derived} by a zero-phase Savitzky-Golay derivative (cubic, {WINDOW} samples, h = {h:.6g} s)"
    return Data(t, x, xd, xdd, q, tau, how if derived else "rates and accelerations from the file", derived)


def _derivative(y, h, order, window=None):
    from scipy.signal import savgol_filter

    return savgol_filter(y, WINDOW if window is None else window, 3, deriv=order, delta=h, axis=0, mode="interp")


def _refiltered(d: Data, window: int) -> Data:
    """``d`` with what the filter derived (:attr:`Data.filtered`) derived again with ``window`` samples."""
    h = float(np.mean(np.diff(d.t)))
    if d.filtered == "rates and accelerations":
        xd = _derivative(d.x, h, 1, window)
        return d._replace(xd=xd, xdd=_derivative(xd, h, 1, window))
    if d.filtered == "accelerations":
        return d._replace(xdd=_derivative(d.xd, h, 1, window))
    return d


def _highpass_noise(taus) -> np.ndarray:
    """The torques' own noise per column: the RMS of their second difference / √6 within each array of ``taus``
    (white noise of σ gives σ; the motion's curvature adds to it: an upper estimate)."""
    d2 = np.concatenate([t[2:] - 2 * t[1:-1] + t[:-2] for t in taus])
    return np.sqrt(np.mean(d2 ** 2, axis=0) / 6.0)


class Estimate(NamedTuple):
    """``beta`` (r,) the estimated base parameters and ``std`` their standard deviations from the torques' noise;
    ``sigma`` (n_act,) the per-actuator noise estimate; ``rms`` (n_act,) the weighted fit's residual RMS; ``cov``;
    the checks of :func:`identify` (below)."""

    beta: np.ndarray
    std: np.ndarray
    sigma: np.ndarray
    rms: np.ndarray
    cov: np.ndarray
    samples: int
    #: (r,) the change of each parameter with the filter's :data:`WIDE_WINDOW` (zeros: nothing filtered).
    filter: np.ndarray | None = None
    #: (n_act,) the fraction of each measured torque's variance the fit explains, and the torques' own
    #: high-pass noise (their second difference / √6 within each file).
    explained: np.ndarray | None = None
    noise: np.ndarray | None = None

    @property
    def uncertainty(self) -> np.ndarray:
        """Each parameter's ± from the noise (``std``) and from the derivative filter (``filter``) together."""
        return self.std if self.filter is None else np.hypot(self.std, self.filter)


def weighted_least_squares(Yb, tau) -> Estimate:
    """WLS of ``tau`` (N, n_act) on the base regressor ``Yb`` (N, n_act, r) (module docstring)."""
    N, na, r = Yb.shape
    if N * na <= r:
        raise InputError(f"{N} samples of {na} actuators cannot determine {r} base parameters")
    A = Yb.reshape(-1, r)
    b = tau.reshape(-1)
    beta = np.linalg.lstsq(A, b, rcond=None)[0]
    for _ in range(2):   # OLS, then once weighted by its residual's per-actuator noise
        res = (b - A @ beta).reshape(N, na)
        sigma = np.sqrt(np.sum(res ** 2, axis=0) / max(N - r / na, 1.0))
        sigma = np.maximum(sigma, 1e-300 + 1e-15 * np.abs(tau).max(axis=0))
        w = np.tile(1.0 / sigma, N)
        Aw = A * w[:, None]
        beta = np.linalg.lstsq(Aw, b * w, rcond=None)[0]
    res = (b - A @ beta).reshape(N, na)
    sigma = np.sqrt(np.sum(res ** 2, axis=0) / max(N - r / na, 1.0))
    w = np.tile(1.0 / np.maximum(sigma, 1e-300 + 1e-15 * np.abs(tau).max(axis=0)), N)
    Aw = A * w[:, None]
    cond = np.linalg.cond(Aw / np.maximum(np.linalg.norm(Aw, axis=0), 1e-300))
    if not np.isfinite(cond) or cond > 1e12:
        raise PkmError(f"the data do not excite every base parameter (condition number {cond:.3e} of the "
                       "weighted regressor): use an exciting trajectory (pkm identify --excite)")
    cov = np.linalg.inv(Aw.T @ Aw)
    return Estimate(beta=beta, std=np.sqrt(np.diag(cov)), sigma=sigma, rms=np.sqrt(np.mean(res ** 2, axis=0)),
                    cov=cov, samples=N)


def identify(robot, datas, base, *, trim: int = WINDOW):
    """Estimate the base parameters ``base`` (:class:`pkm.identification.base.BaseParameters`) of ``robot``
    from :class:`Data` sets (:func:`_fit`), then judge the fit: a measured torque the fit explains less than
    :data:`MIN_EXPLAINED` of (or a constant one) is a one-line PkmError; an :class:`pkm.AccuracyWarning` where the
    residual exceeds :data:`MODEL_ERROR` times the torques' own noise (the model does not explain the data) and
    where a parameter's ± (the noise's and the filter's, :data:`WIDE_WINDOW`) exceeds :data:`UNDETERMINED` of its
    typical size. Returns ``(Estimate, Y_b, tau)``."""
    import warnings

    est, Yb, tau, noise = _fit(robot, datas, base, trim)
    res = tau - np.einsum("sap,p->sa", Yb, est.beta)
    spread = np.sum((tau - tau.mean(axis=0)) ** 2, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        explained = np.where(spread > 0, 1.0 - np.sum(res ** 2, axis=0) / spread, -np.inf)
    rows = robot.task.coordinate_names() if robot.redundancy else robot.actuator_names
    bad = np.flatnonzero(~(explained >= MIN_EXPLAINED))
    if bad.size:
        a = int(bad[0])
        if spread[a] == 0:
            what = "is constant (a dead sensor?)"
        elif not np.isfinite(explained[a]):
            what = f"overflows the fit (values up to {np.max(np.abs(tau[:, a])):.3g}: units?)"
        else:
            what = f"is explained only {100 * max(explained[a], 0.0):.3g} % by the fit (residual RMS {est.rms[a]:.3g})"
        raise PkmError(f"the measured {'task wrench' if robot.redundancy else 'torque'} {rows[a]} {what}: noise, a "
                       f"dead or saturated sensor, or a column of another motion or actuator; nothing identified")
    change = np.zeros_like(est.beta)
    if any(d.filtered for d in datas):   # (rates and accelerations all from the files: no filter error)
        wide = max(trim, WIDE_WINDOW)
        change = _fit(robot, [_refiltered(d, WIDE_WINDOW) for d in datas], base, wide)[0].beta - \
            _fit(robot, datas, base, wide)[0].beta
    est = est._replace(filter=change, explained=explained, noise=noise)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = est.rms / noise
    off = np.flatnonzero(ratio > MODEL_ERROR)
    if off.size:
        warnings.warn(f"the fit's residual is {', '.join(f'{ratio[a]:.3g}' for a in off)} times the measured "
                      f"torques' own noise ({', '.join(rows[a] for a in off)}): the model does not explain the data "
                      f"(unmodelled friction, an offset, units, another robot?)", AccuracyWarning, stacklevel=2)
    from pkm.identification.parameters import parameter_scales

    names, pi0 = robot.dynamic_parameters()
    scale = np.abs(base.B) @ parameter_scales(pi0, names)
    loose = np.flatnonzero(est.uncertainty > UNDETERMINED * scale)
    if loose.size:
        warnings.warn(f"the data do not determine {', '.join(f'b{k + 1}' for k in loose)}: ± "
                      f"{', '.join(f'{est.uncertainty[k]:.3g}' for k in loose)} against typical sizes "
                      f"{', '.join(f'{scale[k]:.3g}' for k in loose)} (the motion barely excites them; the ± holds "
                      f"the change with a {WIDE_WINDOW}-sample derivative filter): use an exciting trajectory "
                      f"(pkm identify --excite)", AccuracyWarning, stacklevel=2)
    return est, Yb, tau


def _fit(robot, datas, base, trim):
    """The WLS of :func:`identify`: regressor at the measured states (``trim`` samples dropped at each end of
    each file, where the filter is one-sided), the measured positions checked against the IK. Returns
    ``(Estimate, Y_b, tau, noise)`` with the torques' high-pass noise per actuator (over all files)."""
    from pkm.identification.regressor import regression

    Ys, taus = [], []
    for d in datas:
        s = slice(trim, len(d.t) - trim)
        reg = regression(robot, d.x[s], d.xd[s], d.xdd[s], t=d.t[s], columns=base.independent)
        err = float(np.abs(reg.q_act - d.q[s]).max())
        if err > Q_TOL:
            raise InputError(f"the measured actuator positions differ from the IK of the measured task coordinates "
                             f"by {err:.3g} (> {Q_TOL}): data of another robot, or another branch")
        Yb, tau = reg.Y, d.tau[s]
        if robot.redundancy:   # the task wrench: free of the internal forces
            Yb, tau = np.einsum("sad,sap->sdp", reg.J_IK, Yb), np.einsum("sad,sa->sd", reg.J_IK, tau)
        Ys.append(Yb)
        taus.append(tau)
    Yb, tau = np.concatenate(Ys), np.concatenate(taus)
    return weighted_least_squares(Yb, tau), Yb, tau, _highpass_noise(taus)


def validate(robot, data, base, beta, *, trim: int = WINDOW):
    """Residual RMS per actuator of the identified model ``Y_b β`` against a data set not used for the
    fit, and the noise estimate of that set (the RMS of its high-pass part, a second difference of
    the torques scaled by 1/√6: white noise of σ gives σ; the motion's own curvature adds to it, so
    it is an upper estimate). Returns ``(rms, sigma)``; with redundant actuation those of the task
    wrench ``J_IKᵀ τ`` (per task coordinate, see the module docstring)."""
    from pkm.identification.regressor import regression

    s = slice(trim, len(data.t) - trim)
    reg = regression(robot, data.x[s], data.xd[s], data.xdd[s], t=data.t[s], columns=base.independent)
    tau, model = data.tau[s], reg.Y @ beta
    if robot.redundancy:
        tau, model = np.einsum("sad,sa->sd", reg.J_IK, tau), np.einsum("sad,sa->sd", reg.J_IK, model)
    return np.sqrt(np.mean((tau - model) ** 2, axis=0)), _highpass_noise([tau])
