"""The numerical examples of seed 002 (§5) as systems with consistent initial conditions: the gyro
top (§5.1), the cylindrical pair (§5.2) and the planar pair (§5.3) in free flight, and the closed
six-body linkage (§5.4.2). Parameters from the seed (digest §3.3); every derived number (masses,
energies, momenta) is computed here from them — the seed's and the digest's printed values are kept
apart in :attr:`Example.printed`, for comparison only.

Initial velocities are built the seed's way, from its independent velocities (eqs. 170–171,
174–175, 176–177), but written out by hand from the twist relations (eqs. 104, 106, 137, 142),
not through the integrator's null space matrices, so that tests can compare the two.

Six-body linkage: the seed gives body 0 only (a wedge of density ρ, L, γ; mass, centre of mass and
inertia tensor) and says the initial configuration "forms a cube of side L", bodies 0, 2, 4 are
identical and 1, 3, 5 their mirror images. Body 0 is the homogeneous tetrahedron with vertices
(0,0,0), (0,L,0), (aL,0,0), (0,L,−aL) (digest §3.3(e); it reproduces the seed's mass, centre of mass
and inertia tensor, checked in the tests). The loop is the skew hexagon of cube edges
``V₀ … V₅`` of the cube [0,L]×[0,L]×[−L,0] that avoids the vertices X = (L,0,0) and
Y = (0,L,−L); joint k sits at ``V_k`` with its axis along the cube edge from ``V_k`` towards X or
Y, and body k is the tetrahedron ``V_k, V_{k+1}, V_k + aL·a_k, V_{k+1} + aL·a_{k+1}`` — body 0's
edges are then exactly its two hinge lines, body 2 and 4 are rotated copies and 1, 3, 5 mirror
images. Assumptions (the seed does not say): gravity along −e₃; body 0 is the ground; joint k
connects bodies k−1 and k, joint 6 closes the loop between body 5 and body 0 (eq. 190); the rate of
joint 1 is the rotation of body 1 relative to body 0 about ``a₁ = −e₃``.

Also (seed 003, not seed 002): :func:`parallelogram`, a planar parallelogram four-bar that moves
through its flat configuration, a rank loss of the constraint Jacobian (seed 003's Fig. 1 mechanisms
are planar 4R linkages).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.absolute.body import Body
from pkm.absolute.checks import number, positive
from pkm.absolute.joints import Cylindrical, Planar, Revolute, Spherical
from pkm.absolute.markers import Marker
from pkm.absolute.potentials import Gravity, Potential
from pkm.absolute.system import System, as_system
from pkm.errors import InputError

G_ACC = 9.81
#: Bounds of the examples' parameters: sizes (m), densities (kg/m³), rates (rad/s) and gravity (m/s²),
#: far beyond the seed's values (0.1 m, 2700 kg/m³, 10 rad/s, 9.81 m/s²), so that energies stay finite.
MAX_SIZE, MAX_DENSITY, MAX_RATE = 1e3, 1e6, 1e6
#: How close the six-body linkage's wedge angle γ may come to 0 and π/2 (rad).
GAMMA_MARGIN = 1e-3


def _check_state(name, system, q0, v0):
    """The example's start is finite (its kinetic energy too), else a one-line error naming it."""
    if not (np.all(np.isfinite(q0)) and np.all(np.isfinite(v0)) and np.isfinite(system.kinetic_energy(v0))):
        raise InputError(f"{name}: the parameters give a non-finite initial state (out of range)")


@dataclass
class Example:
    """A seed example: the system, consistent ``q0``, ``v0``, its potential, the joints the seed cuts
    to open the loop, and the seed's/digest's printed reference values."""

    name: str
    system: System
    q0: np.ndarray
    v0: np.ndarray
    potential: Potential | None = None
    cut: tuple[str, ...] = ()
    printed: dict = field(default_factory=dict)
    data: dict = field(default_factory=dict)


def _rot_x(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _pose(R=None, p=None):
    C = np.eye(4)
    if R is not None:
        C[:3, :3] = R
    if p is not None:
        C[:3, 3] = p
    return C


# ============================================================================ §5.1 gyro top
def gyro_top(nutation: float = np.pi / 3, precession: float = 10.0, height: float = 0.1, radius: float = 0.05,
             density: float = 2700.0, g: float = G_ACC) -> Example:
    """Steady precession of a symmetric top (a cone) about a fixed point (seed 002 §5.1): an S pair
    with body 1 fixed (here: the ground), eqs. 155–173.

    ``data``: ``mass``, ``L`` (fixed point to centre of mass), ``J``, ``M1``, ``M3`` (eq. 168),
    ``spin`` (eq. 165), ``omega`` (eq. 171), ``com(t)``: the analytic centre of mass (steady
    precession: radius ``L sin θ``, height ``L cos θ``, period ``2π/ω_p``).

    Parameters: ``nutation`` θ in [−π, π] (rad), ``precession`` ω_p ≠ 0 (rad/s; the spin
    ``m g L/(M₃ ω_p)`` of eq. 165 is infinite at 0), ``height``, ``radius`` (m) and ``density``
    positive, ``g`` finite."""
    nutation = number(nutation, "gyro_top: nutation", low=-np.pi, high=np.pi, why=" (rad)")
    precession = number(precession, "gyro_top: precession", low=-MAX_RATE, high=MAX_RATE, why=" (rad/s)")
    if abs(precession) < 1.0 / MAX_RATE:
        raise InputError(f"gyro_top: precession must not be 0 (|ω_p| ≥ {1.0 / MAX_RATE:g} rad/s): steady "
                         f"precession needs the spin m g L/(M₃ ω_p) of seed 002 eq. 165, infinite at ω_p = 0; "
                         f"got {precession!r}")
    height = positive(height, "gyro_top: height", high=MAX_SIZE, why=" (m)")
    radius = positive(radius, "gyro_top: radius", high=MAX_SIZE, why=" (m)")
    density = positive(density, "gyro_top: density", high=MAX_DENSITY, why=" (kg/m³)")
    g = number(g, "gyro_top: g", low=-MAX_RATE, high=MAX_RATE, why=" (m/s²)")
    mass = density * np.pi * radius**2 * height / 3.0
    L = 0.75 * height
    J1 = 3.0 * mass / 80.0 * (4.0 * radius**2 + height**2)
    J3 = 0.3 * mass * radius**2
    top = Body("top", mass, np.diag([J1, J1, J3]), com=[0.0, 0.0, L])   # frame at the fixed point
    joint = Spherical(Marker(None), Marker.in_frame(top, [0.0, 0.0, 0.0]), name="S")
    system = System([top], [joint])
    R0 = _rot_x(nutation)                                           # d_I = exp(θ ê₁) e_I (eq. 169)
    q0 = top.coordinates(_pose(R0))
    M1, M3 = J1 + mass * L**2, J3                                   # eq. 168
    spin = mass * g * L / (M3 * precession) + (M1 - M3) / M3 * precession * np.cos(nutation)  # eq. 165
    omega = precession * np.array([0.0, 0.0, 1.0]) + spin * R0[:, 2]                         # eq. 171
    v0 = top.velocity(q0, np.concatenate([omega, np.cross(omega, q0[:3])]), frame="com")      # eq. 170

    def com(t):
        t = np.asarray(t, dtype=float)
        r = L * np.sin(nutation)
        return np.stack([r * np.sin(precession * t), -r * np.cos(precession * t),
                         np.full_like(t, L * np.cos(nutation))], axis=-1)

    _check_state("gyro_top", system, q0, v0)
    return Example("gyro top", system, q0, v0, Gravity(system, [0.0, 0.0, -g]),
                   printed={"E0": 5.669055, "e3.L": 0.0710658, "radius": 0.0649519, "z": 0.0375,
                            "period": 0.6283},
                   data={"mass": mass, "L": L, "J": (J1, J1, J3), "M1": M1, "M3": M3, "spin": spin,
                         "omega": omega, "com": com, "precession": precession, "nutation": nutation})


# ============================================================================ §5.2 cylindrical pair
def cylindrical_pair() -> Example:
    """Free flight of a cylindrical pair (seed 002 §5.2): a cylinder and a hollow cylinder, joint at
    both centres of mass along ``n¹ = e₃``; independent velocities eq. 175, twist of body 2 by
    eqs. 104 and 106."""
    b1 = Body("cylinder", 4.0, np.diag([304.0, 304.0, 8.0]))
    b2 = Body("hollow cylinder", 3.0, np.diag([18.75, 18.75, 19.5]))
    joint = Cylindrical(Marker(b1), Marker(b2), name="C")
    system = System([b1, b2], [joint])
    q0 = system.coordinates([_pose(), _pose(p=[0.0, 0.0, -11.0])])
    v1, w1, du, dth = np.array([0.0, 50.0, 0.0]), np.array([1.0, 1.5, 0.0]), 35.5, -100.0
    n = np.array([0.0, 0.0, 1.0])
    rho2 = np.zeros(3)
    w2 = w1 + dth * n                                                                     # eq. 104
    v2 = v1 + np.cross(w1, q0[12:15] - q0[:3]) + du * n + dth * np.cross(rho2, n)         # eq. 106
    v0 = np.concatenate([b1.velocity(q0[:12], np.concatenate([w1, v1]), frame="com"),
                         b2.velocity(q0[12:], np.concatenate([w2, v2]), frame="com")])
    return Example("cylindrical pair", system, q0, v0,
                   printed={"T0": 110904.71875, "L0": (2335.75, 1028.625, -1950.0)},
                   data={"nu": np.array([*v1, *w1, du, dth]), "twist2": np.concatenate([w2, v2])})


# ============================================================================ §5.3 planar pair
def planar_pair() -> Example:
    """Free flight of a planar pair (seed 002 §5.3): a plate and a pyramid sliding on its top face;
    independent velocities eq. 177, twist of body 2 by eqs. 137 and 142."""
    b1 = Body("plate", 5.0, np.diag([5125.0 / 48.0, 5125.0 / 48.0, 640.0 / 3.0]))
    b2 = Body("pyramid", 2.0, np.diag([43.0 / 40.0, 43.0 / 40.0, 4.0 / 5.0]))
    rho1, rho2 = np.array([0.0, 0.0, 0.25]), np.array([0.0, 0.0, -1.0])
    joint = Planar(Marker(b1, rho1), Marker(b2, rho2), name="E")
    system = System([b1, b2], [joint])
    q0 = system.coordinates([_pose(p=[5.0, 5.0, 5.0]), _pose(p=[-2.0, -2.0, 6.25])])
    v1, w1 = np.zeros(3), np.array([-20.0, -20.0, 10.0])
    du, dth = np.array([150.0, -120.0]), 60.0
    m1, m2, n = np.eye(3)
    w2 = w1 + dth * n                                                                        # eq. 137
    v2 = v1 + np.cross(w1, q0[12:15] - q0[:3]) + du[0] * m1 + du[1] * m2 + dth * np.cross(rho2, n)  # eq. 142
    v0 = np.concatenate([b1.velocity(q0[:12], np.concatenate([w1, v1]), frame="com"),
                         b2.velocity(q0[12:], np.concatenate([w2, v2]), frame="com")])
    return Example("planar pair", system, q0, v0,
                   printed={"T0": 121015.0, "L0": (-94.4167, 280.5833, 3629.3333)},
                   data={"nu": np.array([*v1, *w1, *du, dth]), "twist2": np.concatenate([w2, v2])})


# ============================================================================ §5.4.2 six-body linkage
def tetrahedron(vertices, density: float):
    """(mass, centre of mass, inertia tensor about it) of a homogeneous tetrahedron."""
    V = np.asarray(vertices, dtype=float)
    vol = abs(np.linalg.det(V[1:] - V[0])) / 6.0
    m = density * vol
    s = V.sum(axis=0)
    c = s / 4.0
    second = density * vol / 20.0 * (V.T @ V + np.outer(s, s))   # ∫ x xᵀ ρ dV
    E = second - m * np.outer(c, c)                                # Euler tensor about the centre
    return m, c, np.trace(E) * np.eye(3) - E


def six_body_linkage(rate: float = 30.0, density: float = 1000.0, L: float = 0.1, gamma: float = 0.16 * np.pi,
                     g: float = G_ACC) -> Example:
    """The closed six-body (Bricard-type) 6R linkage of seed 002 §5.4.2, body 0 fixed (the ground),
    geometry as in the module docstring. The initial velocity is the linkage's one-dimensional
    null space scaled so that joint 1 turns at ``rate`` (θ̇¹ = 30, eq. 191), taken from the SVD of
    the full constraint Jacobian (independent of the integrators' null spaces).

    ``data``: ``a``, ``vertices`` (V₀…V₅), ``axes`` (a₀…a₅), ``tetrahedra`` (per body), ``body0`` =
    (mass, com, inertia) of body 0 from its tetrahedron.

    Parameters: ``gamma`` in (0, π/2) — the wedge angle; the wedge's height ``a L = tan γ L`` is 0 at
    γ = 0 (no body) and infinite at π/2 — within :data:`GAMMA_MARGIN` of both ends (there the masses
    and lever arms of the wedges differ by so many orders that the constraint Jacobian's rank, the one
    DOF, is lost in rounding); ``rate`` finite (rad/s, 0: at rest), ``density`` (kg/m³) and ``L`` (m)
    positive, ``g`` finite."""
    gamma = number(gamma, "six_body_linkage: gamma", low=GAMMA_MARGIN, high=0.5 * np.pi - GAMMA_MARGIN,
                   why=" (rad): the wedges' height tan(γ)·L is 0 at γ = 0 and infinite at γ = π/2, where the "
                       "linkage degenerates")
    rate = number(rate, "six_body_linkage: rate", low=-MAX_RATE, high=MAX_RATE, why=" (rad/s)")
    density = positive(density, "six_body_linkage: density", high=MAX_DENSITY, why=" (kg/m³)")
    L = positive(L, "six_body_linkage: L", high=MAX_SIZE, why=" (m)")
    g = number(g, "six_body_linkage: g", low=-MAX_RATE, high=MAX_RATE, why=" (m/s²)")
    a = np.tan(gamma)
    V = L * np.array([[0, 0, 0], [0, 1, 0], [1, 1, 0], [1, 1, -1], [1, 0, -1], [0, 0, -1]], dtype=float)
    X, Y = np.array([L, 0.0, 0.0]), np.array([0.0, L, -L])
    axes = np.array([(X if k % 2 == 0 else Y) - V[k] for k in range(6)]) / L
    tets = [np.array([V[k], V[(k + 1) % 6], V[k] + a * L * axes[k], V[(k + 1) % 6] + a * L * axes[(k + 1) % 6]])
            for k in range(6)]
    bodies = []
    for k in range(1, 6):
        m, c, J = tetrahedron(tets[k], density)
        bodies.append(Body(f"body{k}", m, J, com=c))              # frame = world frame at the start
    system0 = System(bodies, [])
    q0 = system0.coordinates([np.eye(4)] * 5)
    qb = {b.name: q0[system0.body_slice(b)] for b in bodies}

    def hinge(k):
        z = axes[k % 6]
        x = np.cross(z, [1.0, 1.0, 1.0])
        x /= np.linalg.norm(x)
        F = _pose(np.column_stack([x, np.cross(z, x), z]), V[k % 6])
        i, j = (k - 1) % 6, k % 6                                 # joint k: bodies k−1 and k (6 ≡ 0)
        side = [None if i == 0 else bodies[i - 1], None if j == 0 else bodies[j - 1]]
        mi = Marker.at(side[0], None if side[0] is None else qb[side[0].name], F)
        mj = Marker.at(side[1], None if side[1] is None else qb[side[1].name], F)
        return Revolute(mi, mj, name=f"R{k}")

    system = System(bodies, [hinge(k) for k in range(1, 7)])
    N = system.null_space(q0)
    if N.shape[1] != 1:
        raise InputError(f"six_body_linkage(gamma={gamma!r}, L={L!r}, density={density!r}): the linkage has "
                         f"{N.shape[1]} DOF at the start by the SVD, not one (degenerate geometry)")
    w1 = bodies[0].twist(q0[:12], N[:12, 0], frame="com")[:3]
    v0 = N[:, 0] * rate / float(w1 @ axes[1])
    _check_state("six_body_linkage", system, q0, v0)
    return Example("six-body linkage", system, q0, v0, Gravity(system, [0.0, 0.0, -g]), cut=("R6",),
                   printed={"a": 0.549755, "mass": 0.0503717, "com0": (0.0137439, 0.05, -0.0137439),
                            "J11": 3.08948e-5, "J22": 1.14179e-5, "J12": 6.92302e-6, "J13": -1.90298e-6},
                   data={"a": a, "L": L, "vertices": V, "axes": axes, "tetrahedra": tets,
                         "body0": tetrahedron(tets[0], density), "rate": rate, "density": density})


# ============================================================================ seed 003: a singular passage
def _rot_z(angle):
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def parallelogram(angle: float = 0.0, rate: float = 12.0, crank: float = 0.3, length: float = 0.8,
                  crank_mass: float = 2.0, coupler_mass: float = 3.0, g: float = G_ACC) -> Example:
    """A planar parallelogram four-bar in the x–y plane, gravity ``−g e_y``: two equal cranks
    (uniform bars, ``crank`` long) on revolute joints (axis z) at the ground points (0, 0, 0) and
    (``length``, 0, 0), and a coupler (a uniform bar, ``length`` long) on spherical joints at the
    crank tips. Both cranks at ``angle`` from +x turning at ``rate`` (rad/s), the coupler translating
    (the parallelogram branch).

    At ``angle`` = 0 or π (the flat configurations: all four bars on the x axis) the joints'
    Jacobian ``Φ_q P_int`` loses one rank (16 rows, rank 15: the cranks' pulls along the line and the
    coupler's push are a self-stress), the branch point where the parallelogram and the
    anti-parallelogram motions cross; elsewhere it has full rank. 3 bodies, 18 − 16 = 2 DOF (the
    crank angle and the coupler's free spin about its own axis, which stays at rest).

    Along the parallelogram motion the system moves as one pendulum, ``θ`` the crank angle:
    ``K θ̇² / 2 + P sin θ = const`` with ``K = 2 I_A + m_c r²``, ``P = (m r + m_c r) g``, ``I_A = m r²/3``;
    ``data`` holds ``K``, ``P`` and the parameters."""
    angle = number(angle, "parallelogram: angle", low=-2.0 * np.pi, high=2.0 * np.pi, why=" (rad)")
    rate = number(rate, "parallelogram: rate", low=-MAX_RATE, high=MAX_RATE, why=" (rad/s)")
    r = positive(crank, "parallelogram: crank", high=MAX_SIZE, why=" (m)")
    L = positive(length, "parallelogram: length", high=MAX_SIZE, why=" (m)")
    m = positive(crank_mass, "parallelogram: crank_mass", high=MAX_DENSITY, why=" (kg)")
    mc = positive(coupler_mass, "parallelogram: coupler_mass", high=MAX_DENSITY, why=" (kg)")
    g = number(g, "parallelogram: g", low=-MAX_RATE, high=MAX_RATE, why=" (m/s²)")
    R = _rot_z(angle)
    omega = np.array([0.0, 0.0, rate])
    bodies, qs, vs, joints, tips = [], [], [], [], []
    for k, base in enumerate((np.zeros(3), np.array([L, 0.0, 0.0]))):
        # a bar's axial moment is small but positive (a thin bar of radius r/20)
        bar = Body(f"crank{k + 1}", m, np.diag([m * r * r / 800.0, m * r * r / 12.0, m * r * r / 12.0]))
        com = base + 0.5 * r * R[:, 0]
        q = bar.coordinates(_pose(R, com))
        bodies.append(bar)
        qs.append(q)
        vs.append(bar.velocity(q, np.concatenate([omega, np.cross(omega, com - base)]), frame="com"))
        joints.append(Revolute(Marker.at(None, None, _pose(p=base)), Marker.at(bar, q, _pose(p=base)),
                               name=f"R{k + 1}"))
        tips.append(base + r * R[:, 0])
    coupler = Body("coupler", mc, np.diag([mc * L * L / 800.0, mc * L * L / 12.0, mc * L * L / 12.0]))
    qc = coupler.coordinates(_pose(p=0.5 * (tips[0] + tips[1])))
    bodies.append(coupler)
    qs.append(qc)
    vs.append(coupler.velocity(qc, np.concatenate([np.zeros(3), np.cross(omega, tips[0])]), frame="com"))
    for k in range(2):
        joints.append(Spherical(Marker.at(bodies[k], qs[k], _pose(p=tips[k])),
                                Marker.at(coupler, qc, _pose(p=tips[k])), name=f"S{k + 1}"))
    system = System(bodies, joints)
    q0, v0 = np.concatenate(qs), np.concatenate(vs)
    _check_state("parallelogram", system, q0, v0)
    return Example("parallelogram four-bar", system, q0, v0, Gravity(system, [0.0, -g, 0.0]),
                   data={"K": 2.0 * m * r * r / 3.0 + mc * r * r, "P": (m + mc) * r * g, "crank": r, "length": L,
                         "crank_mass": m, "coupler_mass": mc, "g": g, "angle": angle, "rate": rate})


def parallelogram_forces(example: Example, theta):
    """The joints' forces along the parallelogram motion of :func:`parallelogram`, from the
    one-pendulum model (its doc: energy gives θ̇², ``θ̈ = −P cos θ / K``) and Newton's law — the
    coupler translates with a crank tip, the two cranks carry it equally (their moment balances about
    the pivots, for sin θ ≠ 0; at sin θ = 0 the split along the line is statically indeterminate):
    ``(F_R, F_S)`` (…, 3), the force of a revolute on its crank and of a crank on the coupler, at the
    crank angles ``theta`` (rad) — independent of any integrator, for checking one."""
    d = example.data
    r, m, mc, g = d["crank"], d["crank_mass"], d["coupler_mass"], d["g"]
    theta = np.asarray(theta, dtype=float)[..., None]
    rate2 = d["rate"] ** 2 + 2.0 * d["P"] * (np.sin(d["angle"]) - np.sin(theta)) / d["K"]
    u = np.concatenate([np.cos(theta), np.sin(theta), 0.0 * theta], axis=-1)
    e = np.concatenate([-np.sin(theta), np.cos(theta), 0.0 * theta], axis=-1)
    tip = r * (-d["P"] * np.cos(theta) / d["K"] * e - rate2 * u)        # acceleration of a crank tip
    gravity = np.array([0.0, -g, 0.0])
    on_coupler = 0.5 * mc * (tip - gravity)
    return m * (0.5 * tip - gravity) + on_coupler, on_coupler


def crank_angle(q) -> np.ndarray:
    """The first crank's angle from +x (rad) of :func:`parallelogram` coordinates ``q`` (..., 36)."""
    q = np.asarray(q, dtype=float)
    return np.arctan2(q[..., 4], q[..., 3])


def joint_angles(system, q) -> np.ndarray:
    """Relative rotation angle of every revolute-type joint about marker i's z axis, from marker
    i's x axis to marker j's (rad), for ``q`` (..., n); for the linkage's θ¹ … θ⁶."""
    from pkm.absolute.checks import array

    q = array(q, "q", (as_system(system).n,), batch=True, bound=MAX_SIZE * 1e3)
    out = []
    for j in system.joints:
        Ci = _marker_frames(j.marker_i, system, q)
        Cj = _marker_frames(j.marker_j, system, q)
        xi, zi, xj = Ci[..., :, 0], Ci[..., :, 2], Cj[..., :, 0]
        out.append(np.arctan2(np.einsum("...c,...c->...", np.cross(xi, xj), zi), np.einsum("...c,...c->...", xi, xj)))
    return np.stack(out, axis=-1)


def _marker_frames(marker, system, q):
    if marker.body is None:
        return np.broadcast_to(marker.axes, q.shape[:-1] + (3, 3))
    D = np.swapaxes(q[..., system.body_slice(marker.body)][..., 3:].reshape(q.shape[:-1] + (3, 3)), -1, -2)
    return D @ marker.axes
