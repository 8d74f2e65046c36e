"""Identification of the dynamic parameters (issue 29, item 4): the regressor ``τ = Y π``
(:mod:`~pkm.identification.regressor`), the standard parameters and their conventions
(:mod:`~pkm.identification.parameters`), the base parameters (:mod:`~pkm.identification.base`),
the least-squares estimate from measured data (:mod:`~pkm.identification.estimate`), identified robot
files (:mod:`~pkm.identification.writer`) and excitation trajectories (:mod:`~pkm.identification.excitation`).

Layer 5 (beside ``sim``): it takes a :class:`pkm.robot.Robot` as an argument and runs the kernels;
the facade's ``robot.regressor`` and ``robot.dynamic_parameters`` delegate here.
"""
from pkm.identification.parameters import SUFFIXES, dynamic_parameters, standard
from pkm.identification.regressor import EXTRA_TERMS, parameters, regression, regressor

__all__ = ["SUFFIXES", "EXTRA_TERMS", "dynamic_parameters", "parameters", "regression", "regressor", "standard"]
