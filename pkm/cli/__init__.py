"""Layer 7 — the ``pkm`` command (entry point :func:`pkm.cli.main.run`).

:mod:`.main` holds the parser and the ``info``, ``ik``, ``inverse-dynamics`` and ``eom``
commands; :mod:`.info` the robot summary of ``pkm info``; :mod:`.sweep` the ``pkm sweep`` command.
"""
