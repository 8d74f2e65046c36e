"""The drives' and the joints' friction parameters of the regressor (issue 29: "the drive parameters
(rotor inertia, friction coefficients)").

The joint terms (:attr:`pkm.description.model.TreeModel.joint_terms`) add ``armature θ̈ + viscous θ̇ +
coulomb tanh(θ̇/v_c)`` to a joint's generalized force (the paper's ``Q`` of eq. 100), linear in
``armature`` (a drive's reflected rotor inertia ``n² J_m``), ``viscous`` and ``coulomb`` for the file's
fixed ``v_c``. Every file joint with a ``drive`` (armature, viscous, coulomb) or ``friction`` table
(viscous, coulomb) contributes those parameters, named ``<joint>.armature`` … (``limb.<joint>.…`` for
a representative limb's joint: one parameter for all its mounts and for every axis of a U or S
joint). Their regressor columns are the kernel's inverse dynamics with every inertia zero and only
that parameter's joint terms set to 1 (:func:`pkm.identification.regressor.regression`), so the
passive joints' friction reaches the actuators through ``Fᵀ Hᵀ`` (eq. 113, 144) like the rest.
"""
from __future__ import annotations


from pkm.description.model import JOINT_TERMS

__all__ = ["JointTerm", "joint_term_parameters"]

#: The identified joint-term columns (armature, viscous, coulomb) of :data:`JOINT_TERMS`.
KINDS = JOINT_TERMS[:3]


class JointTerm(tuple):
    """``(name, value, slots)``: ``slots`` a list of ``(limb, tree variable, column)`` of the joint terms."""

    @property
    def name(self):
        return self[0]

    @property
    def value(self):
        return self[1]

    @property
    def slots(self):
        return self[2]


def joint_term_parameters(robot) -> list[JointTerm]:
    """The robot's joint-term parameters (module docstring), in file order of the joints."""
    limb_joints = {j.name for j in robot.spec.limb.joints} if robot.spec.limb is not None else set()
    groups: dict = {}
    for k, limb in enumerate(robot.limbs):
        T = limb.tree.joint_terms
        if T is None:
            continue
        by_name = {j.name: j for j in limb.topology.joints}
        for i, full in enumerate(limb.tree.joint_names):
            joint = by_name.get(full)
            if joint is None or (joint.drive is None and joint.friction is None):
                continue
            short = full.split("/", 1)[1] if "/" in full else full
            base = f"limb.{short}" if "/" in full and short in limb_joints else full
            kinds = KINDS if joint.drive is not None else KINDS[1:]
            for kind in kinds:
                c = JOINT_TERMS.index(kind)
                name = f"{base}.{kind}"
                groups.setdefault(name, [float(T[i, c]), []])[1].append((k, i, c))
    return [JointTerm((name, value, slots)) for name, (value, slots) in groups.items()]
