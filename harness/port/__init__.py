"""Porting a model end to end: ``harness port MODEL`` and ``harness opt``.

- :mod:`.options`: what to port and how (the library's defaults; ``OPT_DEFAULTS`` for
  ``harness opt``);
- :mod:`.model`: MODEL -> its variants -> each frontend -> a :class:`~.record.PortRecord`;
- :mod:`.frontend`: one frontend's program and import; :mod:`.lowering`: the torch backend
  contract, each target and each backend's numbers (:mod:`.verify`, :mod:`.culprit`);
- :mod:`.diagnose`: blockers ranked, through the tools (blockers, bisect, explain);
- :mod:`.record`: the versioned record (``--json``); :mod:`.render`: the terminal report;
- :mod:`.progress`: stages on the terminal as they run, and the in-process time limit;
- :mod:`.emit`: ``harness emit NAME``, a named model's IR cached by name and versions (lit's
  tests start from it).
"""

from __future__ import annotations

from .options import OPT_DEFAULTS, PortOptions
from .progress import Progress
from .record import SCHEMA, PortOutcome, PortRecord, PortStage

__all__ = ["OPT_DEFAULTS", "SCHEMA", "PortOptions", "PortOutcome", "PortRecord", "PortStage",
           "Progress", "port_model"]


def port_model(model: str, options: PortOptions = PortOptions(), *,
               progress: Progress | None = None) -> PortRecord:
    """See :func:`harness.port.model.port_model` (imported on first use: it loads torch)."""
    from .model import port_model as run
    from .progress import QUIET

    return run(model, options, progress=progress or QUIET)
