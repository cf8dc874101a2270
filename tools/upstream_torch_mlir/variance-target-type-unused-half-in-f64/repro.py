"""torch-mlir computes an f16 variance in f64: calculateVariance computes `targetTy` (f32 for a
16-bit float, llvm/torch-mlir#4283) and never uses it.

Imports `torch.var_mean(x, -1, correction=0, keepdim=True)` of a float16 [4, 16] tensor with
`torch_mlir.fx.export_and_import(..., output_type=...)` for "linalg-on-tensors" and "tosa", and
looks for the f16 -> f64 upcast in each (`arith.extf ... f16 to f64`, `tosa.cast ... xf16> ->
...xf64>`). Needs torch, numpy and torch-mlir only.

Exit status: 1 when either output computes the f16 variance in f64 (the bug), 0 when neither
does (f32, as #4283 meant), 2 when it cannot run.
"""

import sys

UPCAST = {"linalg-on-tensors": "f16 to f64", "tosa": "xf16>) -> tensor<4x16xf64>"}


def main() -> int:
    try:
        import torch
        from torch_mlir import fx
    except ImportError as e:
        print(f"CANNOT RUN: {e}; install torch and torch-mlir")
        return 2

    class VarMean(torch.nn.Module):
        def forward(self, x):
            return torch.var_mean(x, -1, correction=0, keepdim=True)

    found = []
    for output_type, upcast in UPCAST.items():
        text = str(fx.export_and_import(VarMean(), torch.randn(4, 16, dtype=torch.float16),
                                        output_type=output_type))
        f64 = [line.strip() for line in text.splitlines() if "f64" in line]
        print(f"--- output_type={output_type!r}: {len(f64)} lines name f64, e.g.")
        print("\n".join(f64[:4]))
        if any(upcast in line for line in f64):
            found.append(output_type)
    if found:
        print(f"repro.py: REPRODUCED: the f16 variance is computed in f64 ({', '.join(found)})")
        return 1
    print("repro.py: NOT REPRODUCED: no f16 -> f64 upcast")
    return 0


if __name__ == "__main__":
    sys.exit(main())
