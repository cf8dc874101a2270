// Stock Hugging Face OPTModel (preset tiny, random weights kept), traced through the project's
// importer, with the two harness fixes its torch-mlir gaps need: `bitwise-and-or`
// (aten.__and__.Tensor has no lowering: and-tensor-no-lowering.mlir) and `sdpa-explicit-scale`
// (the scale=1.0 OPT passes to aten.scaled_dot_product_attention is ignored:
// sdpa-explicit-scale-miscompile.mlir). `harness fix` checks each fix in the reference evaluator
// (the IR before and after, op by op in eager PyTorch), lowers, and runs the result on the
// RefBackend against the unfixed import. opt-125m-stock-fixed.mlir: the same at OPT-125m.
// When upstream closes both gaps, the FIX lines fail (nothing left to fix): then delete them.
// REQUIRES: sdpa-scale-to-linalg

// RUN: %PYTHON -m harness emit opt-tiny --keep-weights --cache %harness-ir-cache -q -o %t.mlir
// RUN: %PYTHON -m harness fix %t.mlir -o %t.fixed.mlir --out %t.d --no-progress | FileCheck %s --check-prefix=FIX
// FIX:      applied: sdpa-explicit-scale (torch-ir) for torch.aten.scaled_dot_product_attention (torch-to-linalg)
// FIX:        numbers: same-numbers: the IR before and after, in eager PyTorch (reference evaluator)
// FIX:      applied: bitwise-and-or (torch-ir) for torch.aten.__and__.Tensor (torch-to-linalg)
// FIX-NEXT:   changed: aten.__and__.Tensor -> aten.bitwise_and.Tensor (x2, first at masking_utils.py:54)
// FIX-NEXT:   numbers: same-numbers: the IR before and after, in eager PyTorch (reference evaluator)
// FIX:      verified: with sdpa-explicit-scale, bitwise-and-or, {{.*}} lowers through torchscript-to-torch and torch-to-linalg, and the RefBackend matches the reference evaluator of the input

// The fixed file is at the torch backend contract; it lowers on its own.
// RUN: torch-mlir-opt %t.fixed.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// LINALG-LABEL: func.func @forward(
// LINALG-SAME:    %{{.*}}: tensor<1x7xi64>, %{{.*}}: tensor<1x7xi64>) -> tensor<1x7x64xf32>
// LINALG-COUNT-2: arith.andi %{{.*}}, %{{.*}} : i1
// LINALG-COUNT-2: tm_tensor.attention
// LINALG-NOT:     torch.aten
