"""torch-mlir's TOSA for an int64 tensor's .float() is a tosa.cast i64 -> f32, which no TOSA
profile or extension has.

Imports `x.float()` of an int64 tensor with
`torch_mlir.fx.export_and_import(..., output_type="tosa")`, then runs MLIR's `tosa-validate`
(TOSA 1.1.draft, pro_int and pro_fp, the int64 extension) through the wheel's MLIR Python
bindings, the same passes as `mlir-opt --tosa-attach-target="specification_version=1.1.draft
profiles=pro_int,pro_fp extensions=int64" --tosa-validate="strict-op-spec-alignment"` (the int64
extension needs 1.1.draft: with the default 1.0 this MLIR refuses the target itself).
Needs torch, numpy and torch-mlir only.

Exit status: 1 when the TOSA has the i64 -> f32 cast and tosa-validate refuses it (the bug), 0
when the cast sequence validates (or the conversion fails with an error of its own: printed),
2 when it cannot run.
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

    class ToFloat(torch.nn.Module):
        def forward(self, x):
            return x.float()

    try:
        tosa = fx.export_and_import(ToFloat(), torch.arange(64).reshape(4, 16), output_type="tosa")
    except Exception as e:  # a conversion that refuses the cast with its own error: not this bug
        print(f"repro.py: NOT REPRODUCED: the TOSA lowering fails: {e}")
        return 0
    text = str(tosa)
    print("\n".join(line for line in text.splitlines() if "tosa.cast" in line))
    with ir.Context():
        module = ir.Module.parse(text)
        try:
            passmanager.PassManager.parse(VALIDATE).run(module.operation)
        except ir.MLIRError as e:
            said = str(e)
            print("tosa-validate:", said)
            if "got (i64,f32)" in said:
                print("repro.py: REPRODUCED: tosa.cast i64 -> f32")
                return 1
            print("repro.py: NOT REPRODUCED: tosa-validate fails otherwise")
            return 0
    print("repro.py: NOT REPRODUCED: tosa-validate: success")
    return 0


if __name__ == "__main__":
    sys.exit(main())
