"""An upstream bug report a maintainer reproduces in one command: ``harness report``.

The end of the porting loop. From an IR file that fails a pipeline it builds one folder (and a
``.tar.gz`` of it beside it) holding:

- ``issue.md``: title from the record's signature (from the blocker, the op whose conversion
  failed, for a legalization failure), summary, versions, the exact command, the crash or the
  diagnostics, expected behaviour, the failing pass (bisect), the reduced IR and how to
  reproduce;
- ``repro.sh``: runs ``$TORCH_MLIR_OPT`` (default: the binary used) on ``reduced.mlir``
  (``input.mlir`` when there is none) and exits non-zero exactly when the bug reproduces, so
  it doubles as an interestingness test;
- ``input.mlir`` (weights elided unless that changes the failure, or ``keep_weights``),
  ``reduced.mlir`` (harness.diagnose.reduce with a budget), ``backtrace.txt`` (the symbolized
  stack, or the stderr of a diagnostic) and ``record.json`` (the original RunRecord, bisect,
  reduce and the self-check).

One module per job:

- ``build``: the runs in order, and the refusals (an input that passes, or is not valid IR);
- ``inputs``: input.mlir, weights elided through the MLIR bindings;
- ``redact``: home, user name and the bundle's paths, whatever characters they hold, in linear
  time and bounded memory;
- ``diagnosis``: the title, diagnosis, expected behaviour and known upstream reports of a
  blocker (``harness.diagnose.blockers``, ``harness.knowledge``);
- ``issue`` (with ``markdown`` and ``templates/issue.md.in``): issue.md and backtrace.txt;
- ``repro`` (with ``templates/repro.sh.in``): repro.sh, the one launcher of every kind;
  ``repro_check``: runs it for the self-check; ``replay``: a compile failure's self-check;
- ``standalone`` (with ``templates/repro.py.in``): repro.py, which needs only torch, numpy and
  the torch-mlir wheel (miscompiles, run-time failures, upstream MLIR passes);
- ``sections``: issue.md's Root cause, Reproduces through, Blocks and Upstream, and the triage
  against the catalog of known upstream reports (``known #N``, ``by design``);
- ``bundle``: the staging folder (removed on errors, Ctrl-C, SIGTERM and SIGHUP) and the
  atomic publication of the folder and its archive;
- ``result``: options, the bundle kinds (``BundleKind``), the one self-check rule
  (``ReproVerdict.of_exit``, ``SelfCheck``), the findings every kind's record.json and
  issue.md are written from (``BundleFindings``; ``Findings`` for a compile failure), the result.

Why the binary's path is redacted too: ``repro.sh`` looks for it at run time
(``$TORCH_MLIR_OPT``; else the recorded path when it exists, ``~`` being ``$HOME`` and
``<site-packages>`` looked up with ``python3``/``python`` on PATH; else ``torch-mlir-opt`` on
PATH), so on the machine that made the report the recorded binary is found whenever its Python
(or venv) is on PATH.

The compiler-bug bundle reads files and records only: no torch, no importer or models (it is
the end of the data path); the MLIR bindings re-print IR with weights elided. The ``--numerics``
bundles (``miscompile``, ``runtime``) evaluate IR in eager PyTorch through the numerics search,
so they import torch; importing this package does not.
"""

from .build import make_report, make_reports_each, resolve_pipeline
from .issue import backtrace_text, issue_markdown, issue_title
from .redact import Redactor
from .repro import diagnostic_key, repro_script
from .result import (
    BUNDLE_FILES,
    CANNOT_RUN_STATUS,
    REPRODUCED_STATUS,
    BundleFindings,
    BundleKind,
    Findings,
    Refusal,
    ReportOptions,
    ReportResult,
    ReproVerdict,
    SelfCheck,
    Weights,
)

__all__ = [
    "BUNDLE_FILES", "CANNOT_RUN_STATUS", "REPRODUCED_STATUS", "BundleFindings", "BundleKind", "Findings",
    "Redactor", "Refusal", "ReportOptions", "ReportResult", "ReproVerdict", "SelfCheck", "Weights",
    "backtrace_text",
    "diagnostic_key", "issue_markdown", "issue_title", "make_report", "make_reports_each", "repro_script",
    "resolve_pipeline",
]
