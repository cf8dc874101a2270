"""torch-mlir's TOSA for a float32 variance computes in f64, which no TOSA profile has.

Imports `x.var(-1)` and `nn.LayerNorm(16)` on a float32 [4, 16] tensor, and `nn.GroupNorm(2, 4)`
and a training-mode `nn.BatchNorm2d(4)` on a float32 [2, 4, 3, 3] one, with
`torch_mlir.fx.export_and_import(..., output_type="tosa")`, then runs MLIR's `tosa-validate`
(TOSA 1.1.draft, pro_int and pro_fp, the int64 extension) through the wheel's MLIR Python
bindings, the same passes as `mlir-opt --tosa-attach-target="specification_version=1.1.draft
profiles=pro_int,pro_fp extensions=int64" --tosa-validate="strict-op-spec-alignment"` (the int64
extension needs 1.1.draft: with the default 1.0 this MLIR refuses the target itself).
Needs torch, numpy and torch-mlir only.

Exit status: 1 when the TOSA has f64 ops and tosa-validate refuses them (the bug), 0 when it
lowers in f32 and validates, 2 when it cannot run.
"""

import sys

# mlir-opt --tosa-attach-target="specification_version=1.1.draft profiles=pro_int,pro_fp
#          extensions=int64"
#          --tosa-validate="strict-op-spec-alignment"
VALIDATE = ("builtin.module(tosa-attach-target{specification_version=1.1.draft "
            "profiles=pro_int,pro_fp extensions=int64},"
            "tosa-validate{strict-op-spec-alignment})")



def main() -> int:
    try:
        import torch
        from torch_mlir import fx, ir, passmanager
    except ImportError as e:
        print(f"CANNOT RUN: {e}; install torch and torch-mlir")
        return 2

    class Variance(torch.nn.Module):
        def forward(self, x):
            return x.var(-1)

    found = False
    cases = (("x.var(-1)", Variance(), (4, 16)), ("nn.LayerNorm(16)", torch.nn.LayerNorm(16), (4, 16)),
             ("nn.GroupNorm(2, 4)", torch.nn.GroupNorm(2, 4), (2, 4, 3, 3)),
             ("nn.BatchNorm2d(4), training", torch.nn.BatchNorm2d(4).train(), (2, 4, 3, 3)))
    for name, module, shape in cases:
        tosa = fx.export_and_import(module, torch.randn(*shape), output_type="tosa")
        text = str(tosa)
        f64 = [line.strip() for line in text.splitlines() if "f64" in line]
        print(f"--- {name}: {len(f64)} lines of its TOSA name f64, e.g.")
        print("\n".join(f64[:3]))
        with ir.Context():
            module_ir = ir.Module.parse(text)
            try:
                passmanager.PassManager.parse(VALIDATE).run(module_ir.operation)
                print("tosa-validate: success")
            except ir.MLIRError as e:
                said = str(e)
                print("tosa-validate:", said)
                found |= "element type 'f64' is not legal" in said
    print("repro.py: REPRODUCED: f64 TOSA for a float32 variance" if found else "repro.py: NOT REPRODUCED")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
