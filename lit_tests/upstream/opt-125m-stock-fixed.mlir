// Stock Hugging Face OPTModel at OPT-125m's size (random weights, elided), traced through the
// project's importer, with the harness fixes `sdpa-explicit-scale` and `bitwise-and-or`
// (opt-tiny-stock-fixed.mlir says why each): the fixed IR lowers to linalg. The weights are
// elided, so the fixes are not checked here in the reference evaluator (--no-verify); the port
// checks OPT-125m's numbers against eager
// (`harness port opt --size default --variant stock --frontend torchscript --fix`).
// REQUIRES: sdpa-scale-to-linalg

// RUN: %PYTHON -m harness emit opt-125m --cache %harness-ir-cache -q -o %t.mlir
// RUN: %PYTHON -m harness fix %t.mlir -o %t.fixed.mlir --no-verify --out %t.d --no-progress | FileCheck %s --check-prefix=FIX
// FIX:      applied: sdpa-explicit-scale (torch-ir) for torch.aten.scaled_dot_product_attention (torch-to-linalg)
// FIX:      applied: bitwise-and-or (torch-ir) for torch.aten.__and__.Tensor (torch-to-linalg)
// FIX-NEXT:   changed: aten.__and__.Tensor -> aten.bitwise_and.Tensor (x2, first at masking_utils.py:54)
// FIX:      wrote {{.*}}.fixed.mlir (sdpa-explicit-scale, bitwise-and-or; run it through torch-to-linalg)

// RUN: torch-mlir-opt %t.fixed.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// LINALG-LABEL: func.func @forward(
// LINALG-SAME:    %{{.*}}: tensor<1x7xi64>, %{{.*}}: tensor<1x7xi64>) -> tensor<1x7x768xf32>
// LINALG-COUNT-2:  arith.andi %{{.*}}, %{{.*}} : i1
// LINALG-COUNT-12: tm_tensor.attention
// LINALG-NOT:      torch.aten
