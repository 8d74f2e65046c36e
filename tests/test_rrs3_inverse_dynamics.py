"""Inverse dynamics of seed 003's 3-(RR)S platform (examples/rrs3_platform.toml, issue 17) by two
methods: the motors' torques of a prescribed motion from the drives' multipliers
(:meth:`pkm.absolute.loader.AbsoluteModel.inverse_dynamics`), checked (1) by the power balance
``Σ τ θ̇ = d/dt (T + V)`` with the energy differentiated numerically (fourth order) along the motion, and (2) by
forward dynamics: the undriven mechanism under those torques (a spline table) follows the
prescribed motion. pkm's minimal-coordinate engine cannot take this robot (its platform's parasitic
motions do not fit a task space that holds the unselected components; see the file)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from pkm.absolute.forward import simulate
from pkm.absolute.loader import load_spec as absolute_model
from pkm.description.robotfile import load_spec
from pkm.sim.inputs import Table

ROBOT = Path(__file__).resolve().parents[1] / "examples" / "rrs3_platform.toml"
T, DT = 0.2, 1e-3
AMPLITUDE = np.array([0.20, -0.15, 0.10])            # rad, a different motion of each motor
OMEGA = 2 * np.pi / 0.4


@pytest.fixture(scope="module")
def motion():
    """The model and, at t = 0, DT, …, T: the prescribed motor angles, the torques, configurations
    and velocities of the driven mechanism (each sample assembled from the previous one)."""
    model = absolute_model(load_spec(ROBOT))
    t = np.arange(0.0, T + DT / 2, DT)
    s = np.sin(OMEGA * t)[:, None]
    c = np.cos(OMEGA * t)[:, None]
    th, thd, thdd = AMPLITUDE * (1 - c), AMPLITUDE * OMEGA * s, AMPLITUDE * OMEGA**2 * c
    tau, qs, vs = [], [], []
    q = model.reference
    for k in range(len(t)):
        tk, q, v, *_ = model.solve_instant(th[k], thd[k], thdd[k], q)
        tau.append(tk)
        qs.append(q)
        vs.append(v)
    return model, t, th, thd, np.array(tau), np.array(qs), np.array(vs)


def test_power_balance(motion):
    model, t, _, thd, tau, qs, vs = motion
    system = model.system
    g = system.gravity_force(model.gravity)
    energy = np.array([system.kinetic_energy(v) - g @ q for q, v in zip(qs, vs)])
    # fourth-order central differences: error ~ DT⁴ E⁽⁵⁾/30 ≈ 1e-8 of the power here
    dE = (energy[:-4] - 8 * energy[1:-3] + 8 * energy[3:-1] - energy[4:]) / (12 * DT)
    power = np.sum(tau * thd, axis=1)[2:-2]
    scale = np.max(np.abs(power))
    assert scale > 1.0                                         # the motors do work
    assert np.max(np.abs(power - dE)) <= 1e-6 * scale


def test_forward_dynamics_follows_the_prescribed_motion(motion):
    """The undriven mechanism under the drives' torques retraces the driven one (≤ 1e-6 in q)."""
    model, t, _, _, tau, qs, vs = motion
    steps = 20
    tr = simulate(model, Table(t, tau), qs[0], vs[0], T / steps, steps, rtol=1e-10, atol=1e-12)
    at = np.round(tr.t / DT).astype(int)
    assert np.max(np.abs(tr.q - qs[at])) <= 1e-6
    assert np.max(np.abs(qs[-1] - qs[0])) > 0.05                # it moved
    assert np.max(tr.constraint_residual) <= 1e-10
