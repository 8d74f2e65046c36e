"""Absolute (maximal) coordinates: rigid bodies in director form, the joint catalogue as algebraic
constraints with Lagrange multipliers, redundant-row removal and consistent initial conditions
(seeds 000, 001, 002; issue 16). A second formulation beside pkm's minimal-coordinate one.

Modules, one idea each: ``body`` (director coordinates q = (φ, d₁, d₂, d₃), internal constraints,
mass matrix, poses and twists), ``markers`` (frames on bodies), ``quadratic`` (the engine every joint
uses: rows that are quadratic forms in marker vectors; Φ, Φ_q, γ, reactions), ``joints`` (seed 000's
S, S–S, R, U, C, P and seed 002's planar pair), ``lock`` (seed 001's lock with a row mask and
prescribed motion, director rows), ``quaternion`` and ``quaternion_lock`` (seed 001's lock as the
seed writes it: rotation rows from the quaternion of the relative rotation, Jacobians from its 4×4
quaternion-product matrices, moving markers; no false zeros at half turns), ``laws`` (time laws for
rheonomic constraints), ``redundancy`` (dependent rows by pivoted QR / SVD), ``system`` (global
assembly, consistent initial conditions, false zeros refused), ``loader`` (robot files, inverse
dynamics through drives), ``modes`` (assembly modes: the branch given as data, or a start near the
result).

Time integration (seed 002): ``energy_momentum`` (the energy–momentum scheme, constrained and as
the discrete null space method), built on ``tree`` (spanning tree, each joint's relative motion),
``reparam`` (the product-of-exponentials update F(μ)), ``nullspace`` (discrete null space matrices),
``hessian`` (constraint Hessians for Newton), ``potentials`` (gravity, springs, discrete gradient);
``standard`` (generalized-α, projected ODE, for comparison); ``joint_reactions`` (seed 003: joint
reactions as the unknowns of a Taylor step, output per joint); ``results`` (trajectories with their
health); ``examples`` (seed 002's gyro top, cylindrical and planar pairs, six-body linkage; seed
003's parallelogram through its flat configuration). These load numba (through :mod:`pkm.lie`) and
are imported on first use: ``pkm.absolute.EnergyMomentum``.

Arguments: ``checks`` (numbers, counts, arrays, time steps) and ``model_checks`` (the robot-file
model's motions, efforts, start configurations): every public function and class refuses a bad
argument up front with a one-line :class:`~pkm.errors.InputError`, and a step whose Newton iteration
fails ends in one line that says so ("try a smaller dt", :func:`energy_momentum.step_failed`).
"""
from pkm.absolute.body import Body
from pkm.absolute.joints import (
    JOINTS,
    Cylindrical,
    Distance,
    Planar,
    Prismatic,
    Revolute,
    Spherical,
    Universal,
)
from pkm.absolute.lock import LOCK_MASKS, LOCK_ROWS, Lock
from pkm.absolute.markers import Marker
from pkm.absolute.quaternion_lock import QuaternionLock
from pkm.absolute.redundancy import RedundancyReport, dependent_rows
from pkm.absolute.system import AssemblyError, AssemblyModeError, System

_LAZY = {"EnergyMomentum": "energy_momentum", "simulate": "energy_momentum", "ConvergenceError": "energy_momentum",
         "GeneralizedAlpha": "standard", "projected_ode": "standard", "Trajectory": "results",
         "Gravity": "potentials", "Spring": "potentials", "Tree": "tree", "JointReactions": "joint_reactions"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"pkm.absolute.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'pkm.absolute' has no attribute {name!r}")


__all__ = ["Body", "Marker", "Spherical", "Distance", "Revolute", "Universal", "Cylindrical", "Prismatic",
           "Planar", "JOINTS", "Lock", "QuaternionLock", "LOCK_MASKS", "LOCK_ROWS", "RedundancyReport", "dependent_rows",
           "System", "AssemblyError", "AssemblyModeError", *_LAZY]
