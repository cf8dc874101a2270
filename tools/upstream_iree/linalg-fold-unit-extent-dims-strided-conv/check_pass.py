"""Runs the pass-pipeline string argv[2] on the file argv[1] through MLIR's Python bindings (what
`mlir-opt --pass-pipeline=...` does): the input is verified first, the pass runs with the pass
manager's verifier off so that its output is printed whatever it is, and that output is then
verified. Exit status 0 when it verifies, 1 (with the verifier's diagnostics) when it does not."""
import sys

from pathlib import Path

from torch_mlir import ir, passmanager

with ir.Context():
    module = ir.Module.parse(Path(sys.argv[1]).read_text())
    module.operation.verify()  # raises on an invalid input
    pm = passmanager.PassManager.parse(sys.argv[2])
    pm.enable_verifier(False)
    pm.run(module.operation)
    print(module.operation.get_asm(assume_verified=True))
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        print(error, file=sys.stderr)
        sys.exit(1)
