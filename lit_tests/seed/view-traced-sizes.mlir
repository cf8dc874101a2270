// Seed idiom 5: view with sizes read from a tensor while tracing (OPT attention's `_shape`,
// `tensor.view(bsz, seq_len, heads, head_dim)` with `bsz, seq_len, _ = hidden.size()`),
// harness.models.seed.ViewOfTracedSizes, and its fix.
//
// 2022 (walkthrough):
//   error: failed to legalize operation 'torch.aten.view' that was explicitly marked illegal
// which it blamed on bsz being a tensor during tracing; "fixed" by
// `map(int, hidden_states.size())`. (The op it printed, `torch.aten.view ... :
// (!torch.tensor<[1,7,768],f32>, ...)`, had a non-value operand, the form of idiom 6
// (tuple-of-views.mlir): after the int fix the same views crashed the linalg pipeline instead.)
// Now: the traced sizes still go through prim.NumToTensor / aten.Int.Tensor into the view's
// size list (at the idiom's line), the torchscript pipeline folds them to constants, and the
// view lowers to tensor.expand_shape through both importers; so does the fix.

// RUN: %PYTHON -m harness emit seed-view-traced-sizes --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: torch-mlir-opt %t.ts.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:view-traced-sizes}
// IMPORT:      %[[BSZ:.*]] = torch.aten.Int.Tensor %{{.*}} : !torch.tensor<[],si64> -> !torch.int
// IMPORT:      %[[SEQ:.*]] = torch.aten.Int.Tensor %{{.*}} : !torch.tensor<[],si64> -> !torch.int
// IMPORT:      %[[SIZES:.*]] = torch.prim.ListConstruct %[[BSZ]], %[[SEQ]], %{{.*}}, %{{.*}} :
// IMPORT:      torch.aten.view %{{.*}}, %[[SIZES]] : {{.*}} -> !torch.tensor<[2,5,2,4],f32> loc({{.*}}"aten::view"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// TRACED-LABEL:   func.func @forward(
// EXPORTED-LABEL: func.func @main(
// LINALG-SAME:      %[[H:.*]]: tensor<2x5x8xf32>) -> tensor<2x2x5x4xf32>
// LINALG:           %[[SPLIT:.*]] = tensor.expand_shape %[[H]] {{\[}}[0], [1], [2, 3]] output_shape [2, 5, 2, 4] : tensor<2x5x8xf32> into tensor<2x5x2x4xf32>
// LINALG:           %[[T:.*]] = linalg.transpose ins(%[[SPLIT]] : tensor<2x5x2x4xf32>) outs(%{{.*}} : tensor<2x2x5x4xf32>) permutation = [0, 2, 1, 3]
// LINALG:           return %[[T]] : tensor<2x2x5x4xf32>

// RUN: %PYTHON -m harness emit seed-view-traced-sizes --importer fx --cache %harness-ir-cache -q -o %t.fx.mlir
// RUN: torch-mlir-opt %t.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED

// The fix: int sizes, constants of the trace.
// RUN: %PYTHON -m harness emit seed-view-traced-sizes-fixed --cache %harness-ir-cache -q -o %t.fixed.ts.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.fixed.ts.mlir
// FIXED-IMPORT-NOT: torch.aten.Int.Tensor
// FIXED-IMPORT:     torch.aten.view
// RUN: torch-mlir-opt %t.fixed.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// RUN: %PYTHON -m harness emit seed-view-traced-sizes-fixed --importer fx --cache %harness-ir-cache -q -o %t.fixed.fx.mlir
// RUN: torch-mlir-opt %t.fixed.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED
