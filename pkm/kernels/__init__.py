"""Layer 4 — batched numba kernels: whole trajectories in one compiled call.

:mod:`.model` packs a robot's limbs into flat arrays (:class:`~pkm.kernels.model.KernelModel`),
:mod:`.ik` solves the limbs' inverse kinematics sample by sample, :mod:`.inverse_dynamics` is the
inverse-dynamics kernel (``run_range``), and :mod:`.batch` drives it over chunks and threads.

Imports only the layers below (:mod:`pkm.errors`, :mod:`pkm.lie`, :mod:`pkm.description`,
:mod:`pkm.algorithms`).
"""
