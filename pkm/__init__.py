"""pkm — kinematics and dynamics of parallel kinematic machines (PKM) with hybrid complex limbs.

Conventions (see README): twists are ``(ω; v)``, wrenches ``(m; f)``, body-fixed twists and
Jacobians, spatial joint screws at the reference configuration, SI units inside.

>>> import pkm
>>> robot = pkm.load("robots/delta_3rr2rrr.toml")     # doctest: +SKIP
"""

from pkm.errors import (AccuracyWarning, BranchError, BranchWarning, IKError, InputError, LimitError, PkmError,
                        RobotFileError, SingularityError, TopologyError)

__version__ = "0.1.0"
__all__ = ["load", "Robot", "time_optimal", "sweep", "workspace", "AccuracyWarning", "BranchError", "BranchWarning", "IKError", "InputError", "LimitError", "PkmError", "RobotFileError", "SingularityError", "TopologyError"]


def __getattr__(name):  # lazy: keep `import pkm` (and the CLI's error path) free of numba start-up
    if name in ("load", "Robot"):
        from pkm import robot

        return getattr(robot, name)
    if name == "time_optimal":   # pkm.planning: the time-optimal motion along a path (issue 31)
        from pkm.planning import time_optimal

        return time_optimal
    if name in ("sweep", "workspace", "export", "planning"):  # callable modules: pkm.sweep(...) runs a sweep, pkm.workspace(...)
        import importlib                           # a map; pkm.export.pinocchio(robot), pkm.export.write_mjcf(...)

        return importlib.import_module(f"pkm.{name}")
    raise AttributeError(f"module 'pkm' has no attribute {name!r}")
