"""Exports of a pkm robot to other multibody codes (issue 30): :func:`pinocchio` (a Pinocchio model
with its constraint models, :mod:`pkm.export.pinocchio_model`) and :func:`write_mjcf` (an MJCF
file with equality constraints and motors for MuJoCo, :mod:`pkm.export.mjcf`). Both write the
model of :mod:`pkm.export.tree` (one tree plus rigid constraints, exactly pkm's dynamics)
and refuse in one line a robot that has no exact equivalent there. The peers (``pip install
"pkm[export]"``) are imported only when called."""
from pkm.export.mjcf import mjcf_string, write_mjcf
from pkm.export.tree import multibody
from pkm.export.pinocchio_model import pinocchio

__all__ = ["mjcf_string", "multibody", "pinocchio", "write_mjcf"]
