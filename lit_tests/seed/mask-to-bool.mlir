// Seed idiom 4: a float mask cast to bool (OPT's _expand_mask: the [bsz, src] mask expanded to
// [bsz, 1, tgt, src] and cast to float, inverted, then
// `inverted.masked_fill(inverted.to(torch.bool), finfo.min)`), harness.models.seed.MaskToBool,
// and its fix.
//
// 2022 (walkthrough):
//   error: unsupported byte, char or bool type for convertScalarToDtype 'f32'(scalar type) ->
//   'i1'(dtype)
//   error: failed to legalize operation 'torch.aten.to.dtype' that was explicitly marked illegal
// on `torch.aten.to.dtype ... : (!torch.vtensor<[1,1,7,7],f32>, ...) -> !torch.vtensor<[1,1,7,7],i1>`.
// Now: the f32 -> i1 aten.to.dtype (at the idiom's line) lowers, as a compare with zero
// (`arith.cmpf une`, PyTorch's "non-zero is true"), through both importers; the fix compares
// the integer mask with zero instead (`arith.cmpi eq`). Pass-level case:
// lit_tests/pass/to-dtype-bool.mlir.

// RUN: %PYTHON -m harness emit seed-mask-to-bool --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: torch-mlir-opt %t.ts.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:mask-to-bool}
// IMPORT:      %[[BOOL_DTYPE:.*]] = torch.constant.int 11
// IMPORT:      torch.aten.to.dtype %{{.*}}, %[[BOOL_DTYPE]], {{.*}} : !torch.tensor<[2,1,5,5],f32>, {{.*}} -> !torch.tensor<[2,1,5,5],i1> loc({{.*}}"aten::to"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// TRACED-LABEL:   func.func @forward(
// EXPORTED-LABEL: func.func @main(
// LINALG-SAME:      %[[X:.*]]: tensor<2x1x5x5xf32>, %[[MASK:.*]]: tensor<2x5xi64>) -> tensor<2x1x5x5xf32>
// LINALG:           %[[BOOL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<2x1x5x5xi1>)
// LINALG:             arith.cmpf une, %{{.*}}, %{{.*}} : f32
// LINALG:           linalg.generic {{.*}} ins(%[[BOOL]], {{.*}} : tensor<2x1x5x5xi1>,
// LINALG:             arith.select
// LINALG-NOT:       torch.
// LINALG:           return %{{.*}} : tensor<2x1x5x5xf32>

// RUN: %PYTHON -m harness emit seed-mask-to-bool --importer fx --cache %harness-ir-cache -q -o %t.fx.mlir
// RUN: torch-mlir-opt %t.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED

// The fix: `mask == 0` is bool already.
// RUN: %PYTHON -m harness emit seed-mask-to-bool-fixed --cache %harness-ir-cache -q -o %t.fixed.ts.mlir
// RUN: torch-mlir-opt %t.fixed.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=FIXED,FIXED-TRACED
// RUN: %PYTHON -m harness emit seed-mask-to-bool-fixed --importer fx --cache %harness-ir-cache -q -o %t.fixed.fx.mlir
// RUN: torch-mlir-opt %t.fixed.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=FIXED,FIXED-EXPORTED
// FIXED-TRACED-LABEL:   func.func @forward(
// FIXED-EXPORTED-LABEL: func.func @main(
// FIXED-SAME:             %{{.*}}: tensor<2x1x5x5xf32>, %[[MASK:.*]]: tensor<2x5xi64>) -> tensor<2x1x5x5xf32>
// FIXED:                  linalg.generic {{.*}} ins(%[[MASK]] : tensor<2x5xi64>) outs(%{{.*}} : tensor<2x5xi1>)
// FIXED:                    arith.cmpi eq
// FIXED-NOT:              arith.cmpf une
// FIXED:                  arith.select
// FIXED-NOT:              torch.
// FIXED:                  return
