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
the projection reports (:func:`consistent_standard` returns the largest change of ``β`` in standard
deviations).
"""
from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.identification.parameters import (LIMB, from_pseudo_inertia, parameter_scales, physical_problem,
                                          pseudo_inertia)


def nearest_standard(base, beta, pi0) -> np.ndarray:
    """The standard parameters nearest ``pi0`` (scaled) with ``base.B π = beta`` exactly (to rounding)."""
    s = parameter_scales(pi0)
    Bs = base.B * s[None, :]
    d = np.linalg.lstsq(Bs, beta - base.B @ pi0, rcond=None)[0]
    return pi0 + s * d


def problems(pi) -> list[str]:
    """``"body k: why"`` for every body (10-parameter group) that is not physically consistent."""
    return [f"{g}: {why}" for g in range(len(pi) // 10) if (why := physical_problem(pi[10 * g:10 * g + 10]))]


def consistent_standard(base, beta, std_beta, pi0, start=None):
    """Physically consistent standard parameters as near ``beta`` (in units of ``std_beta``) and then
    ``pi0`` as possible (module docstring). Returns ``(π, largest |Δβ|/σ)``."""
    from scipy.optimize import least_squares

    s = parameter_scales(pi0)
    G = len(pi0) // 10
    start = pi0 if start is None else start
    theta0 = []
    for g in range(G):
        J = pseudo_inertia(start[10 * g:10 * g + 10])
        lam, V = np.linalg.eigh(J)
        J = (V * np.maximum(lam, 1e-6 * max(lam[-1], 1e-12))) @ V.T
        L = np.linalg.cholesky(J)
        theta0.extend(L[np.tril_indices(4)])
    tri = np.tril_indices(4)

    def pi_of(theta):
        out = np.empty(10 * G)
        for g in range(G):
            L = np.zeros((4, 4))
            L[tri] = theta[10 * g:10 * g + 10]
            out[10 * g:10 * g + 10] = from_pseudo_inertia(L @ L.T)
        return out

    sb = np.maximum(np.asarray(std_beta, float), 1e-12 * np.maximum(np.abs(beta), 1e-300))

    def resid(theta):
        p = pi_of(theta)
        return np.concatenate([1e3 * (base.B @ p - beta) / sb, 1e-3 * (p - pi0) / s])

    sol = least_squares(resid, np.array(theta0), method="lm", max_nfev=4000)
    pi = pi_of(sol.x)
    return pi, float(np.max(np.abs(base.B @ pi - beta) / sb))


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
    text = (f"# {note}\n" if note else "") + _dump(top)
    Path(out).write_text(text, encoding="utf-8")


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
