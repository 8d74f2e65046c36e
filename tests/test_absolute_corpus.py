"""Hostile inputs to :mod:`pkm.absolute` (issue 27, item 4): every public function and class of the
absolute-coordinate layer refuses a bad argument up front with a one-line :class:`pkm.InputError`
naming it — a NaN, ±inf, a string, None, a bool or a complex number for a number, a float for a
count, a wrong shape or type, a value out of range — with no LAPACK text on stderr, no warning, and
nothing non-finite returned; a time step too large for Newton's method ends in one line that says
"try a smaller dt"; a degenerate example parameter is refused with the reason.

The corpus is generated: each numeric argument × :data:`NUMBERS` (and its own out-of-range values),
each array argument × :data:`arrays` of its shape. Small systems only (the gyro top, a pendulum, the
Delta's absolute model without numba), so the whole file takes seconds.
"""
from __future__ import annotations

import math
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import ROBOTS
from pkm.absolute import Body, Distance, Lock, Marker, Revolute, Spherical, System, examples, laws
from pkm.absolute.energy_momentum import ConvergenceError, EnergyMomentum, simulate
from pkm.absolute.forward import consistent_state
from pkm.absolute.joint_reactions import JointReactions, actuated_jacobian, efforts_force
from pkm.absolute.loader import load_spec
from pkm.absolute.potentials import Gravity, Spring
from pkm.absolute.redundancy import dependent_rows
from pkm.absolute.standard import GeneralizedAlpha, projected_ode
from pkm.absolute.tree import Tree
from pkm.description.robotfile import load_spec as read_robot_file
from pkm.errors import InputError, PkmError

NAN, INF = math.nan, math.inf
DELTA = ROBOTS / "delta_3rr2rrr.toml"
#: Coordinates of the Delta's absolute model (16 bodies × 12).
C_N = 192
#: What a fuzzer puts where a number belongs (each is refused everywhere).
NUMBERS = (NAN, INF, -INF, "1", None, True, 1 + 1j, [1.0])


def arrays(shape):
    """Bad values for an array argument of ``shape``: NaN, inf, a wrong shape, a string, None,
    complex, ragged."""
    good = np.ones(shape)
    nan, inf = good.copy(), good.copy()
    nan.flat[0], inf.flat[-1] = NAN, INF
    return (nan, inf, np.ones(shape[:-1] + (shape[-1] + 1,)), "abc", None, good + 1j, [[1.0, 2.0], [3.0]])


@pytest.fixture(scope="module")
def c():
    """The objects the corpus calls: the gyro top (S joint to the ground), a pendulum with a
    spring, the Delta's absolute model and a consistent state of it."""
    top = examples.gyro_top()
    b = Body("b", 1.0, np.diag([0.1, 0.1, 0.05]), com=[0.0, 0.0, -0.5])
    q = b.coordinates(np.eye(4))
    hinge = Revolute(Marker(None), Marker.in_frame(b, [0.0, 0.0, 0.0], [[1, 0, 0], [0, 0, -1], [0, 1, 0]]), name="R")
    pend = System([b], [hinge])
    model = load_spec(read_robot_file(DELTA))
    th = np.full(3, 0.3)
    dq0, dv0 = consistent_state(model, th, np.zeros(3), model.reference)
    return SimpleNamespace(top=top, em=EnergyMomentum(top.system, top.q0, top.potential), b=b, q=q, pend=pend,
                           hinge=hinge, model=model, th=th, dq0=dq0, dv0=dv0, s=top.system, q0=top.q0, v0=top.v0,
                           g=top.potential, m0=Marker(None), m1=Marker(b))


# ====================================================================== the corpus
def _numbers(label, call, extra=()):
    """Cases: ``call(value)`` for each hostile number and each of ``extra`` (out of range)."""
    return [(f"{label}={v!r}", (lambda c, v=v: call(c, v))) for v in NUMBERS + tuple(extra)]


def _arrays(label, call, shape, skip=()):
    """Cases: ``call(value)`` for each of :func:`arrays` but those ``skip`` (indices of valid ones:
    2 where any shape goes, 4 where None is the default)."""
    return [(f"{label}[{k}]", (lambda c, v=v: call(c, v))) for k, v in enumerate(arrays(shape)) if k not in skip]


CASES = []
# ---------------------------------------------------------------- bodies, markers, joints, laws
CASES += _numbers("Body mass", lambda c, v: Body("x", v, np.eye(3)), (0.0, -1.0, 1e300, 1e-300))
CASES += _arrays("Body inertia", lambda c, v: Body("x", 1.0, v), (3, 3))
CASES += _arrays("Body com", lambda c, v: Body("x", 1.0, np.eye(3), com=v), (3,))
CASES += [("Body com 1e308", lambda c: Body("x", 1.0, np.eye(3), com=[1e308, 0, 0])),
          ("Body name None", lambda c: Body(None, 1.0, np.eye(3))),
          ("Body inertia negative", lambda c: Body("x", 1.0, -np.eye(3)))]
CASES += _arrays("Body.coordinates pose", lambda c, v: c.b.coordinates(v), (4, 4))
CASES += [("Body.coordinates shear", lambda c: c.b.coordinates(np.diag([2.0, 1.0, 1.0, 1.0])))]
CASES += _arrays("Body.pose q", lambda c, v: c.b.pose(v), (12,))
CASES += _arrays("Body.velocity twist", lambda c, v: c.b.velocity(c.q, v), (6,))
CASES += _arrays("Body.kinetic_energy qd", lambda c, v: c.b.kinetic_energy(v), (12,))
CASES += _arrays("Body.gravity_force g", lambda c, v: c.b.gravity_force(v), (3,))
CASES += [("Body.velocity frame", lambda c: c.b.velocity(c.q, np.zeros(6), frame="xx")),
          ("Body.twist frame", lambda c: c.b.twist(c.q, np.zeros(12), frame=3))]
CASES += _arrays("Marker origin", lambda c, v: Marker(c.b, v), (3,))
CASES += _arrays("Marker axes", lambda c, v: Marker(c.b, np.zeros(3), v), (3, 3))
CASES += _arrays("Marker.at pose", lambda c, v: Marker.at(c.b, c.q, v), (4, 4))
CASES += _arrays("Marker.in_frame point", lambda c, v: Marker.in_frame(c.b, v), (3,))
CASES += [("Marker body str", lambda c: Marker("b")),
          ("Marker.at body str", lambda c: Marker.at("b", c.q, np.eye(4))),
          ("Spherical marker str", lambda c: Spherical("a", c.m1)),
          ("Spherical ground-ground", lambda c: Spherical(c.m0, Marker(None))),
          ("Spherical name int", lambda c: Spherical(c.m0, c.m1, name=3)),
          ("Lock mask unknown", lambda c: Lock(c.m0, c.m1, "zz")),
          ("Lock mask int", lambda c: Lock(c.m0, c.m1, 5)),
          ("Lock mask empty", lambda c: Lock(c.m0, c.m1, [])),
          ("Lock mask numbers", lambda c: Lock(c.m0, c.m1, [1, 2])),
          ("Lock translation not a law", lambda c: Lock(c.m0, c.m1, ("z",), translation=3)),
          ("Lock law returns NaN", lambda c: Lock(c.m0, c.m1, ("z",), translation=laws.along(
              (0, 0, 1), lambda t: (NAN, 0.0, 0.0))).phi(None, c.q)),
          ("laws.along axis zero", lambda c: laws.along((0, 0, 0), laws.constant())),
          ("laws.about law not callable", lambda c: laws.about((0, 0, 1), 3)),
          ("laws.polynomial empty", lambda c: laws.polynomial([])),
          ("laws.fixed_rotation shear", lambda c: laws.fixed_rotation(np.diag([2.0, 1.0, 1.0])))]
CASES += _numbers("Distance length", lambda c, v: Distance(c.m0, c.m1, v), (0.0, -1.0, 1e300))
CASES += _numbers("laws.constant", lambda c, v: laws.constant(v))
CASES += _numbers("laws.sine amplitude", lambda c, v: laws.sine(v, 1.0))
CASES += _arrays("laws.fixed_translation", lambda c, v: laws.fixed_translation(v), (3,))
CASES += _arrays("joint phi qj", lambda c, v: c.hinge.phi(None, v), (12,))
CASES += _numbers("joint phi t", lambda c, v: c.hinge.phi(None, c.q, v))
CASES += _arrays("joint reaction lam", lambda c, v: c.hinge.reaction(None, c.q, v), (5,))
# ---------------------------------------------------------------- System
CASES += [("System joint as a string", lambda c: System([c.b], ["S"])),
          ("System joints a string", lambda c: System([c.b], "S")),
          ("System bodies a Body", lambda c: System(c.b, [c.hinge])),
          ("System joints a joint", lambda c: System([c.b], c.hinge)),
          ("System joint None", lambda c: System([c.b], [None])),
          ("System body a string", lambda c: System(["b"], [])),
          ("System None", lambda c: System(None, None)),
          ("System active string", lambda c: System([c.b], [c.hinge], active="x")),
          ("System active ints", lambda c: System([c.b], [c.hinge], active=[1, 2, 3, 4, 5])),
          ("System.coordinates not poses", lambda c: c.pend.coordinates(3)),
          ("System.coordinates count", lambda c: c.pend.coordinates([np.eye(4)] * 2)),
          ("System.body_slice foreign body", lambda c: c.pend.body_slice(Body("y", 1.0, np.eye(3)))),
          ("System.redundancy method", lambda c: c.pend.redundancy(c.q, method="x")),
          ("System.without not a report", lambda c: c.pend.without("report"))]
for meth in ("phi", "phi_t", "jacobian", "poses", "internal_null_space", "null_space", "redundancy"):
    CASES += _arrays(f"System.{meth} q", lambda c, v, meth=meth: getattr(c.pend, meth)(v), (12,))
for meth in ("phi", "jacobian"):
    CASES += _numbers(f"System.{meth} t", lambda c, v, meth=meth: getattr(c.pend, meth)(c.q, v))
CASES += _arrays("System.gamma qd", lambda c, v: c.pend.gamma(c.q, v), (12,))
CASES += _arrays("System.kinetic_energy qd", lambda c, v: c.pend.kinetic_energy(v), (12,))
CASES += _arrays("System.momentum qd", lambda c, v: c.pend.momentum(c.q, v), (12,))
CASES += _arrays("System.gravity_force g", lambda c, v: c.pend.gravity_force(v), (3,))
CASES += _arrays("System.assemble q0", lambda c, v: c.pend.assemble(v), (12,))
CASES += [("System.assemble q0 1e308", lambda c: c.pend.assemble(np.full(12, 1e308)))]
CASES += _numbers("System.assemble tol", lambda c, v: c.pend.assemble(c.q, tol=v), (0.0, -1.0))
CASES += _numbers("System.assemble max_iter", lambda c, v: c.pend.assemble(c.q, max_iter=v), (-1, 2.5))
CASES += _arrays("System.project_velocity qd", lambda c, v: c.pend.project_velocity(c.q, v), (12,))
CASES += _arrays("System.accelerations force", lambda c, v: c.pend.accelerations(c.q, np.zeros(12), v), (12,))
CASES += _arrays("System.reactions lam", lambda c, v: c.pend.reactions(c.q, v), (11,))
CASES += _numbers("System.null_space rtol", lambda c, v: c.pend.null_space(c.q, rtol=v), (0.0, 1.0))
CASES += _arrays("joint_angles q", lambda c, v: examples.joint_angles(c.pend, v), (12,))
CASES += _arrays("dependent_rows G", lambda c, v: dependent_rows(v), (2, 3), skip=(2,))
CASES += [("dependent_rows G a vector", lambda c: dependent_rows(np.ones(3)))]
CASES += _numbers("dependent_rows rtol", lambda c, v: dependent_rows(np.eye(2), rtol=v), (0.0, 2.0))
CASES += [("Tree cut not names", lambda c: Tree(c.s, [3])), ("Tree system str", lambda c: Tree("s")),
          ("Gravity g NaN", lambda c: Gravity(c.s, [0, 0, NAN])),
          ("Spring marker str", lambda c: Spring(c.pend, "a", c.m1, 1.0)),
          ("Spring foreign body", lambda c: Spring(c.pend, c.m0, Marker(Body("y", 1.0, np.eye(3))), 1.0))]
CASES += _numbers("Spring stiffness", lambda c, v: Spring(c.pend, c.m0, Marker(c.b), v), (-1.0,))
# ---------------------------------------------------------------- energy–momentum, generalized-α, projected ODE
CASES += _numbers("EnergyMomentum.integrate dt", lambda c, v: c.em.integrate(c.q0, c.v0, v, 2), (0.0, -0.01, 1e-300))
CASES += _numbers("EnergyMomentum.integrate steps", lambda c, v: c.em.integrate(c.q0, c.v0, 0.01, v),
                  (0, -1, 2.5, 10**12))
CASES += _numbers("EnergyMomentum.integrate t0", lambda c, v: c.em.integrate(c.q0, c.v0, 0.01, 2, v), (1e300,))
CASES += _arrays("EnergyMomentum.integrate q0", lambda c, v: c.em.integrate(v, c.v0, 0.01, 2), (12,))
CASES += _arrays("EnergyMomentum.integrate v0", lambda c, v: c.em.integrate(c.q0, v, 0.01, 2), (12,))
CASES += _numbers("EnergyMomentum.step dt", lambda c, v: c.em.step(c.q0, c.v0, v), (0.0,))
CASES += _arrays("EnergyMomentum q0", lambda c, v: EnergyMomentum(c.s, v, c.g), (12,))
CASES += _numbers("EnergyMomentum tol", lambda c, v: EnergyMomentum(c.s, c.q0, c.g, tol=v), (0.0, -1.0))
CASES += _numbers("EnergyMomentum max_iter", lambda c, v: EnergyMomentum(c.s, c.q0, c.g, max_iter=v), (0, -1, 2.5))
CASES += _numbers("EnergyMomentum rtol", lambda c, v: EnergyMomentum(c.s, c.q0, c.g, rtol=v), (0.0, 2.0))
CASES += [("EnergyMomentum system str", lambda c: EnergyMomentum("s", c.q0)),
          ("EnergyMomentum potential int", lambda c: EnergyMomentum(c.s, c.q0, 3)),
          ("EnergyMomentum force int", lambda c: EnergyMomentum(c.s, c.q0, force=3)),
          ("EnergyMomentum method", lambda c: EnergyMomentum(c.s, c.q0, method="x")),
          ("EnergyMomentum null_space", lambda c: EnergyMomentum(c.s, c.q0, null_space="x")),
          ("EnergyMomentum cut unknown", lambda c: EnergyMomentum(c.s, c.q0, cut=("nope",))),
          ("EnergyMomentum condition str", lambda c: EnergyMomentum(c.s, c.q0, condition="x")),
          ("EnergyMomentum force returns NaN", lambda c: EnergyMomentum(
              c.s, c.q0, force=lambda t, q, v: np.full(12, NAN)).integrate(c.q0, c.v0, 0.01, 1)),
          ("simulate dt=0", lambda c: simulate(c.s, c.q0, c.v0, 0, 2, c.g)),
          ("simulate steps=-1", lambda c: simulate(c.s, c.q0, c.v0, 0.01, -1, c.g))]
CASES += _numbers("GeneralizedAlpha rho_inf", lambda c, v: GeneralizedAlpha(c.s, c.q0, c.g, rho_inf=v), (-0.1, 1.5))
CASES += _numbers("GeneralizedAlpha max_iter", lambda c, v: GeneralizedAlpha(c.s, c.q0, c.g, max_iter=v), (-1,))
CASES += _numbers("GeneralizedAlpha.integrate dt", lambda c, v: GeneralizedAlpha(c.s, c.q0, c.g).integrate(
    c.q0, c.v0, v, 2), (0.0, -1.0))
CASES += _numbers("GeneralizedAlpha.integrate steps", lambda c, v: GeneralizedAlpha(c.s, c.q0, c.g).integrate(
    c.q0, c.v0, 0.01, v), (-1, 2.5))
CASES += _arrays("GeneralizedAlpha q0", lambda c, v: GeneralizedAlpha(c.s, v, c.g), (12,))
CASES += _numbers("projected_ode dt", lambda c, v: projected_ode(c.s, c.q0, c.v0, v, 2, c.g), (0.0,))
CASES += _numbers("projected_ode steps", lambda c, v: projected_ode(c.s, c.q0, c.v0, 0.01, v, c.g), (-1, 2.5))
CASES += _numbers("projected_ode rtol", lambda c, v: projected_ode(c.s, c.q0, c.v0, 0.01, 1, c.g, rtol=v), (0.0,))
CASES += _numbers("projected_ode atol", lambda c, v: projected_ode(c.s, c.q0, c.v0, 0.01, 1, c.g, atol=v), (-1.0,))
CASES += _arrays("projected_ode q0", lambda c, v: projected_ode(c.s, v, c.v0, 0.01, 1, c.g), (12,))
CASES += [("projected_ode method", lambda c: projected_ode(c.s, c.q0, c.v0, 0.01, 1, c.g, method="XX"))]
# ---------------------------------------------------------------- joint reactions
CASES += _numbers("JointReactions tol", lambda c, v: JointReactions(c.s, tol=v), (0.0,))
CASES += _numbers("JointReactions max_iter", lambda c, v: JointReactions(c.s, max_iter=v), (-1, 2.5))
CASES += _numbers("JointReactions.integrate dt", lambda c, v: JointReactions(c.s).integrate(c.q0, c.v0, v, 2), (0.0,))
CASES += _numbers("JointReactions.integrate steps", lambda c, v: JointReactions(c.s).integrate(c.q0, c.v0, 0.01, v),
                  (-1, 2.5))
CASES += _arrays("JointReactions.integrate q0", lambda c, v: JointReactions(c.s).integrate(v, c.v0, 0.01, 2), (12,))
CASES += [("JointReactions force int", lambda c: JointReactions(c.s, force=3)),
          ("JointReactions system str", lambda c: JointReactions("s"))]
# ---------------------------------------------------------------- examples
CASES += _numbers("gyro_top nutation", lambda c, v: examples.gyro_top(nutation=v), (4.0, 1e308))
CASES += _numbers("gyro_top precession", lambda c, v: examples.gyro_top(precession=v), (0.0, -1e-300, 1e308))
for key in ("height", "radius", "density"):
    CASES += _numbers(f"gyro_top {key}", lambda c, v, key=key: examples.gyro_top(**{key: v}), (0.0, -1.0, 1e308))
CASES += _numbers("gyro_top g", lambda c, v: examples.gyro_top(g=v), (1e308,))
CASES += _numbers("six_body_linkage gamma", lambda c, v: examples.six_body_linkage(gamma=v),
                  (0.0, math.pi / 2, -0.5, math.pi, 1e308))
CASES += _numbers("six_body_linkage rate", lambda c, v: examples.six_body_linkage(rate=v))
for key in ("L", "density"):
    CASES += _numbers(f"six_body_linkage {key}", lambda c, v, key=key: examples.six_body_linkage(**{key: v}),
                      (0.0, -1.0, 1e308))
# ---------------------------------------------------------------- robot files: loader, model, forward
CASES += [("load_spec None", lambda c: load_spec(None)), ("load_spec int", lambda c: load_spec(3)),
          ("model.driven not laws", lambda c: c.model.driven([1, 2, 3])),
          ("model.driven count", lambda c: c.model.driven([])),
          ("model.coordinates not a dict", lambda c: c.model.coordinates(3)),
          ("model.coordinates missing", lambda c: c.model.coordinates({})),
          ("inverse_dynamics shapes differ", lambda c: c.model.inverse_dynamics(
              np.zeros((2, 3)), np.zeros((3, 3)), np.zeros((2, 3)))),
          ("inverse_dynamics no samples", lambda c: c.model.inverse_dynamics(*[np.zeros((0, 3))] * 3)),
          ("inverse_dynamics theta 1e308", lambda c: c.model.inverse_dynamics([1e308] * 3, [0] * 3, [0] * 3)),
          ("inverse_dynamics theta_d 1e99", lambda c: c.model.inverse_dynamics(c.th, [1e99] * 3, [0] * 3)),
          ("inverse_dynamics theta_dd 1e300", lambda c: c.model.inverse_dynamics(c.th, [0] * 3, [1e300] * 3)),
          ("model.simulate u string", lambda c: c.model.simulate("a", c.dq0, c.dv0, 0.01, 1)),
          ("model.simulate u(t) NaN", lambda c: c.model.simulate(lambda t: [NAN] * 3, c.dq0, c.dv0, 0.01, 1)),
          ("model.simulate u(t) count", lambda c: c.model.simulate(lambda t: [1.0] * 2, c.dq0, c.dv0, 0.01, 1))]
CASES += _numbers("load_spec rtol", lambda c, v: load_spec(DELTA, rtol=v), (0.0, 2.0))
CASES += _arrays("inverse_dynamics theta", lambda c, v: c.model.inverse_dynamics(v, [0] * 3, [0] * 3), (3,))
CASES += _arrays("inverse_dynamics theta_d", lambda c, v: c.model.inverse_dynamics(c.th, v, [0] * 3), (3,))
CASES += _arrays("inverse_dynamics theta_dd", lambda c, v: c.model.inverse_dynamics(c.th, [0] * 3, v), (3,))
CASES += _arrays("inverse_dynamics q_start", lambda c, v: c.model.inverse_dynamics(
    c.th, [0] * 3, [0] * 3, q_start=v), (C_N,), skip=(4,))
CASES += _numbers("inverse_dynamics tol", lambda c, v: c.model.inverse_dynamics(c.th, [0] * 3, [0] * 3, tol=v),
                  (0.0, 1.0))
CASES += _arrays("solve_instant theta", lambda c, v: c.model.solve_instant(v, [0] * 3, [0] * 3, c.model.reference),
                 (3,))
CASES += _arrays("driven_state q_start", lambda c, v: c.model.driven_state(c.th, [0] * 3, [0] * 3, v), (C_N,))
CASES += _arrays("consistent_state theta", lambda c, v: consistent_state(c.model, v, [0] * 3, c.model.reference), (3,))
CASES += _arrays("actuator_forces u", lambda c, v: c.model.actuator_forces(c.model.reference, v), (3,))
CASES += _arrays("actuator_forces q", lambda c, v: c.model.actuator_forces(v, [0] * 3), (C_N,))
CASES += _arrays("efforts_force efforts", lambda c, v: efforts_force(c.model, v), (3,))
CASES += _arrays("actuated_jacobian q", lambda c, v: actuated_jacobian(c.model, v), (C_N,))
CASES += _arrays("model.simulate u", lambda c, v: c.model.simulate(v, c.dq0, c.dv0, 0.01, 1), (3,))
CASES += _arrays("model.simulate q0", lambda c, v: c.model.simulate([0] * 3, v, c.dv0, 0.01, 1), (C_N,))
CASES += _numbers("model.simulate dt", lambda c, v: c.model.simulate([0] * 3, c.dq0, c.dv0, v, 1), (0.0, -1.0))
CASES += _numbers("model.simulate steps", lambda c, v: c.model.simulate([0] * 3, c.dq0, c.dv0, 0.01, v), (0, -1, 1.5))
CASES += [("model.simulate method", lambda c: c.model.simulate([0] * 3, c.dq0, c.dv0, 0.01, 1, method="XX"))]


def _quiet(call, capfd):
    """``call()``'s exception (None if it returned), with warnings as errors; nothing may reach stderr
    (LAPACK writes its complaints there, past Python)."""
    capfd.readouterr()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            call()
            exc = None
        except Exception as e:   # noqa: BLE001 - the test inspects it
            exc = e
    assert capfd.readouterr().err == ""
    return exc


@pytest.mark.parametrize("label, call", CASES, ids=[label for label, _ in CASES])
def test_bad_argument_is_one_input_error_line(c, capfd, label, call):
    """Each hostile argument: an InputError (a PkmError and a ValueError) in one line, raised before
    any arithmetic (no warning, no LAPACK text on stderr)."""
    exc = _quiet(lambda: call(c), capfd)
    assert isinstance(exc, InputError), (label, type(exc).__name__, exc)
    assert "\n" not in str(exc) and str(exc), (label, str(exc))


# ====================================================================== steps too large, runaway integrations
@pytest.mark.parametrize("scheme", ["null_space", "constrained", "generalized-alpha", "joint-reactions"])
def test_a_step_too_large_says_try_a_smaller_dt(c, capfd, scheme):
    """dt = 1e6 s on the gyro top: Newton fails; the error is one line naming the step and telling
    the user to try a smaller dt — not a LinAlgError, no LAPACK text."""
    if scheme == "generalized-alpha":
        run = lambda: GeneralizedAlpha(c.s, c.q0, c.g).integrate(c.q0, c.v0, 1e6, 2)  # noqa: E731
    elif scheme == "joint-reactions":
        reactions = JointReactions(c.s, force=lambda t, q, v: -c.g.gradient(q))
        run = lambda: reactions.integrate(c.q0, c.v0, 1e6, 2)  # noqa: E731
    else:
        run = lambda: EnergyMomentum(c.s, c.q0, c.g, method=scheme).integrate(c.q0, c.v0, 1e6, 2)  # noqa: E731
    exc = _quiet(run, capfd)
    assert isinstance(exc, PkmError) and "try a smaller dt" in str(exc) and "\n" not in str(exc), exc


def test_projected_ode_does_not_run_without_bound(c, capfd, monkeypatch):
    """One output step of 1e6 s of the spinning top would take millions of evaluations (a hang): the
    evaluations per output step are bounded and the run ends in one line (the bound lowered here to
    keep the test short)."""
    import pkm.absolute.standard as standard

    monkeypatch.setattr(standard, "MAX_EVALUATIONS", 300)
    exc = _quiet(lambda: projected_ode(c.s, c.q0, c.v0, 1e6, 1, c.g), capfd)
    assert isinstance(exc, ConvergenceError) and "smaller dt" in str(exc), exc


def test_valid_calls_still_work(c, capfd):
    """The checks refuse only what is wrong: the seed's examples, a path to load_spec, a short run of
    every scheme and the model's inverse dynamics give finite results, quietly."""
    assert _quiet(lambda: examples.six_body_linkage(gamma=1.5), capfd) is None
    assert _quiet(lambda: examples.gyro_top(nutation=0.0, precession=-3.0), capfd) is None
    model = load_spec(str(DELTA))   # a path as well as a RobotSpec
    assert model.system.n == c.model.system.n == C_N and model.dof == c.model.dof
    tau = c.model.inverse_dynamics(c.th, [0.1] * 3, [0.2] * 3)
    assert tau.shape == (1, 3) and np.all(np.isfinite(tau))
    for run in (lambda: c.em.integrate(c.q0, c.v0, 0.01, 2), lambda: simulate(c.s, c.q0, c.v0, 0.01, 2, c.g, cut="S"),
                lambda: GeneralizedAlpha(c.s, c.q0, c.g).integrate(c.q0, c.v0, 0.01, 2),
                lambda: projected_ode(c.s, c.q0, c.v0, 0.01, 1, c.g)):
        tr = run()
        assert np.all(np.isfinite(tr.q)) and np.all(np.isfinite(tr.energy)) and tr.steps >= 1
