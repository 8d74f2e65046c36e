"""Progress bars on stderr for the commands that take long (issue 30): ``pkm inverse-dynamics`` above
:data:`pkm.cli.main.PROGRESS_ABOVE` samples, ``pkm reactions`` (about 1 s per sample), ``pkm animate``
(the frames written), ``pkm compile`` (the robots). tqdm's bar, as ``inverse-dynamics`` draws it: on stderr, left
in place when done (``leave``), so that an error after it still ends stderr with its one
``pkm: error: …`` line (tests/test_corpus.py: bar lines, holding ``%|``, are not errors)."""
from __future__ import annotations

import sys


def progress_bar(total: int, desc: str, unit: str, *, above: int):
    """A tqdm bar over ``total`` steps on stderr, disabled (a no-op) for ``total <= above``."""
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, file=sys.stderr, disable=total <= above, dynamic_ncols=True,
                leave=True)
