"""Identified robot files: standard parameters that give the estimated base parameters, as TOML.

The base parameters ``β = B π`` (:mod:`pkm.identification.base`) fix only ``r`` combinations of the
``P`` standard parameters. The written file takes the standard parameters **nearest the nominal ones**
``π₀`` (the file's) that satisfy ``B π = β`` exactly (least change in parameters scaled by each body's
nominal mass and size, :func:`nearest_standard`), so its torques equal the identified model's. Every
body is then checked for physical consistency (positive mass, positive definite pseudo-inertia:
:func:`pkm.identification.parameters.physical_problem`). With ``consistent=True`` a body that fails
is **projected**: the standard parameters are refitted over a Cholesky factor of each body's
pseudo-inertia (physically consistent by construction; ``scipy.optimize.least_squares``), as near
``β`` as that allows and then as near ``π₀``; the file then reproduces the estimate only as far as
the projection reports (:func:`consistent_standard` returns the change of ``β`` in the metric of the
estimate's covariance).
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.identification.parameters import (LIMB, from_pseudo_inertia, parameter_scales, physical_problem,
                                          pseudo_inertia, standard_count)


def nearest_standard(base, beta, pi0) -> np.ndarray:
    """The standard parameters nearest ``pi0`` (scaled) with ``base.B π = beta`` exactly (to rounding)."""
    s = parameter_scales(pi0, base.names)
    Bs = base.B * s[None, :]
    d = np.linalg.lstsq(Bs, beta - base.B @ pi0, rcond=None)[0]
    return pi0 + s * d


def problems(pi, names=None) -> list[str]:
    """``"body k: why"`` for every body (10-parameter group) that is not physically consistent, and every
    negative drive or friction parameter (after the ``standard_count(names)`` standard ones)."""
    n_std = len(pi) if names is None else standard_count(names)
    out = [f"{g}: {why}" for g in range(n_std // 10) if (why := physical_problem(pi[10 * g:10 * g + 10]))]
    return out + [f"{names[k]}: {pi[k]:.6g} is negative" for k in range(n_std, len(pi)) if pi[k] < 0.0]


def consistent_standard(base, beta, cov, pi0, start=None):
    """Physically consistent standard parameters whose base parameters are as near ``beta`` as possible
    in the metric of the estimate's covariance ``cov`` (the whitened misfit ``L⁻¹(Bπ − β)``,
    ``cov = L Lᵀ``: the torque fit's own measure), then as near ``pi0`` (module docstring). Returns
    ``(π, d)`` with ``d = |L⁻¹(Bπ − β)|/√r`` (about 1 for a change of one standard deviation)."""
    from scipy.optimize import least_squares

    s = parameter_scales(pi0, base.names)
    G = standard_count(base.names) // 10
    nx = len(pi0) - 10 * G   # the drives' and friction's parameters: linear, bounded below by 0
    start = pi0 if start is None else start
    theta0 = []
    for g in range(G):
        J = pseudo_inertia(start[10 * g:10 * g + 10])
        lam, V = np.linalg.eigh(J)
        J = (V * np.maximum(lam, 1e-6 * max(lam[-1], 1e-12))) @ V.T
        L = np.linalg.cholesky(J)
        L[np.diag_indices(4)] = np.log(np.diag(L))   # the diagonal as logarithms: J stays positive definite
        theta0.extend(L[np.tril_indices(4)])
    tri = np.tril_indices(4)

    A = np.column_stack([from_pseudo_inertia(E.reshape(4, 4)) for E in np.eye(16)])   # p = A vec(J), linear
    rows, cols = tri
    diag = np.array([10 * g + k for g in range(G) for k in range(10) if rows[k] == cols[k]])   # log-diagonals
    ref = np.array(theta0)[diag]

    def factors(theta):
        Ls = np.zeros((G, 4, 4))
        for g in range(G):
            Ls[g][tri] = theta[10 * g:10 * g + 10]
            Ls[g][np.diag_indices(4)] = np.exp(np.minimum(np.diag(Ls[g]), 50.0))
        return Ls

    def pi_of(theta):
        return np.concatenate([A @ (L @ L.T).ravel() for L in factors(theta)] + [theta[10 * G:]])

    def dpi(theta):   # dπ/dθ, block diagonal: dJ = dL Lᵀ + L dLᵀ (identity for the joint terms)
        D = np.zeros((10 * G + nx, 10 * G + nx))
        D[10 * G:, 10 * G:] = np.eye(nx)
        for g, L in enumerate(factors(theta)):
            for k, (a, b) in enumerate(zip(rows, cols)):
                dL = np.zeros((4, 4))
                dL[a, b] = L[a, a] if a == b else 1.0
                D[10 * g:10 * g + 10, 10 * g + k] = A @ (dL @ L.T + L @ dL.T).ravel()
        return D

    C = np.linalg.cholesky(np.asarray(cov, float) + 1e-30 * np.eye(len(beta)))
    Winv = np.linalg.inv(C)
    sel = np.zeros((len(diag), 10 * G + nx))
    sel[np.arange(len(diag)), diag] = 0.03

    def resid(theta):   # misfit; near the nominal parameters; a weak barrier against a singular J
        p = pi_of(theta)
        return np.concatenate([Winv @ (base.B @ p - beta), 1e-3 * (p - pi0) / s, 0.03 * (theta[diag] - ref)])

    def jac(theta):
        D = dpi(theta)
        return np.vstack([Winv @ base.B @ D, 1e-3 * D / s[:, None], sel])

    theta0 = np.concatenate([theta0, np.maximum(np.asarray(start, float)[10 * G:], 0.0)])
    if nx:   # bounds (the joint terms ≥ 0): the trust-region reflective method
        lower = np.concatenate([np.full(10 * G, -np.inf), np.zeros(nx)])
        sol = least_squares(resid, theta0, jac=jac, method="trf", bounds=(lower, np.inf), max_nfev=4000,
                            ftol=1e-12, xtol=1e-12, gtol=1e-12)
    else:
        sol = least_squares(resid, theta0, jac=jac, method="lm", max_nfev=4000, ftol=1e-12, xtol=1e-12,
                            gtol=1e-12)
    pi = pi_of(sol.x)
    return pi, float(np.linalg.norm(Winv @ (base.B @ pi - beta)) / np.sqrt(len(beta)))


# ---------------------------------------------------------------------- TOML
def write_robot(source, out, names, pi, *, note: str = "") -> None:
    """Write the robot file ``source`` with the inertial data of the standard parameters ``pi`` (names as
    :func:`pkm.identification.parameters.standard`) to ``out``: each body's ``shape``/``mass``/``com``/
    ``inertia`` replaced by explicit ``mass``, ``com``, ``inertia`` (about the COM, body axes) and an
    explicit ``frame`` (the body frame as loaded), in the file's units. Comments are not kept."""
    from pkm.description.robotfile import load_spec

    spec = load_spec(Path(source))
    top = tomllib.loads(Path(source).read_text(encoding="utf-8-sig"))
    unit = {"m": 1.0, "mm": 1e-3}[top.get("units", "m")]
    frames = {b.name: b.frame for b in spec.bodies}
    if spec.limb is not None:
        frames.update({LIMB + b.name: b.frame for b in spec.limb.bodies})
    groups = [n[:-2] for n in names if n.endswith(".m")]
    for g, body in enumerate(groups):
        table = _body_table(top, body, spec)
        p = pi[10 * g:10 * g + 10]
        A = frames[body]
        R, o = A[:3, :3], A[:3, 3]
        m = float(p[0])
        c = p[1:4] / m
        Io = np.array([[p[4], p[5], p[6]], [p[5], p[7], p[8]], [p[6], p[8], p[9]]])
        cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
        Ic = Io + m * cx @ cx
        for k in ("shape", "mass", "com", "inertia", "frame"):
            table.pop(k, None)
        table["mass"] = m
        table["com"] = [float(v) / unit for v in (R @ c + o)]
        table["inertia"] = [[float(v) / unit ** 2 for v in row] for row in 0.5 * (Ic + Ic.T)]
        table["frame"] = {"origin": [float(v) / unit for v in o], "rotation": [[float(v) for v in row] for row in R]}
    _joint_tables(top, names, pi)
    text = (f"# {note}\n" if note else "") + _dump(top)
    Path(out).write_text(text, encoding="utf-8")


def _joint_tables(top, names, pi):
    """The drives' and the joints' friction parameters (after the standard ones,
    :mod:`pkm.identification.joint_terms`) into their joints' ``drive`` / ``friction`` tables:
    ``rotor_inertia = armature / gear_ratio²`` (SI, as the file's drive values are)."""
    n_std = standard_count(names)
    for name, value in zip(names[n_std:], pi[n_std:]):
        base, kind = name.rsplit(".", 1)
        joint = base[len(LIMB):] if base.startswith(LIMB) else base
        tables = (top.get("limb", {}).get("joints", []) if base.startswith(LIMB) else top.get("joints", []))
        table = next(t for t in tables if t.get("name") == joint)
        drive = table.get("drive")
        if drive is not None and kind == "armature":
            drive["rotor_inertia"] = float(value) / float(drive["gear_ratio"]) ** 2
        else:
            (drive if drive is not None else table["friction"])[kind] = float(value)


def _body_table(top, body, spec):
    if body.startswith(LIMB) and spec.limb is not None and body[len(LIMB):] in {b.name for b in spec.limb.bodies}:
        tables = top["limb"]["bodies"]
        name = body[len(LIMB):]
    else:
        if isinstance(top.get("platform"), dict) and body == spec.platform:
            return top["platform"]
        tables, name = top.get("bodies", []), body
    for t in tables:
        if t.get("name") == name:
            return t
    raise PkmError(f"{spec.source}: body {body!r} not found in the file's tables")


_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k):
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if not np.isfinite(v):
            raise InputError(f"cannot write a non-finite number {v!r} to a robot file")
        return repr(float(v))
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    raise InputError(f"cannot write {type(v).__name__} to a robot file")


def _is_aot(v):
    return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)


def _dump(d, path=()) -> str:
    lines, later = [], []
    for k, v in d.items():
        if isinstance(v, dict) and (not path or any(_is_aot(x) or isinstance(x, dict) for x in v.values())):
            later.append(("table", k, v))
        elif _is_aot(v):
            later.append(("aot", k, v))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    out = "\n".join(lines) + ("\n" if lines else "")
    for kind, k, v in later:
        name = ".".join(_key(x) for x in (*path, k))
        if kind == "table":
            out += f"\n[{name}]\n" + _dump(v, (*path, k))
        else:
            for item in v:
                out += f"\n[[{name}]]\n" + _dump(item, (*path, k))
    return out
