"""Named fixes that make stock models lower, each verified against the numbers before it.

One small class per fix, one driver (xDSL's style: the rewrite knows what it changes and when it
may; the driver decides when to run it and checks the result):

- :mod:`.base`: :class:`~.base.Fix`, its two levels (:class:`~.base.IRFix` on the torch dialect
  through the MLIR bindings, :class:`~.base.ModuleFix` on the ``nn.Module`` before tracing or
  export), what a fix reports (sites changed, sites refused);
- the fixes: :mod:`.bitwise` (``bitwise-and-or``), :mod:`.buffers` (``persistent-buffers``),
  :mod:`.autograd` (``autograd-function-forward``); :mod:`.catalog` lists them under the names
  ``harness.knowledge.fixes`` gives the diagnoses;
- :mod:`.loop`: the stage loop for torch IR fixes (only the fixes whose blocker appears, a
  numbers check after each, rollback); :mod:`.file`: ``harness fix FILE -o OUT``;
  :mod:`.modules`: module fixes applied and checked in eager (``harness port --fix``);
  :mod:`.verify`: the checks; :mod:`.outcomes`: how each fix tried ended, :mod:`.steps`: each
  fix tried and its check, JSON both ways (both without torch: a port record reads them).

Sits after ``diagnose`` on the data path: it reads the blocker analysis and the execute layer, and
never imports models or frontends (the port flow hands it the module and the files).
"""
