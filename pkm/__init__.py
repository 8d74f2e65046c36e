"""pkm — kinematics and dynamics of parallel kinematic machines (PKM) with hybrid complex limbs.

Conventions (see README): twists are ``(ω; v)``, wrenches ``(m; f)``, body-fixed twists and
Jacobians, spatial joint screws at the reference configuration, SI units inside.
"""

__version__ = "0.1.0"
