// Seed idiom 1: torch.arange over a size read while tracing (OPT's causal mask,
// `torch.arange(mask.size(-1))`), harness.models.seed.ArangeOfTracedSize, and its fix.
//
// 2022 (walkthrough): the trace turns the size into a 0-d tensor, aten.arange receives it as
// !torch.number, and the shape function call failed to verify:
//   error: 'func.call' op operand type mismatch: expected operand type '!torch.float', but
//   provided '!torch.number' for operand number 0   (callee @__torch_mlir_shape_fn.aten.arange)
// Fixed by `torch.arange(int(mask.size(-1)))`.
// Now: the traced IR still carries the idiom (a !torch.number end for aten.arange, located at
// the idiom's line), but torch-reify-shape-calculations converts the number operand, and both
// importers lower the idiom and its fix to linalg-on-tensors. torch.export specializes the size
// to a constant, so the FX import never sees a number.

// The traced import: the number operand, at the Python line of the idiom.
// RUN: %PYTHON -m harness emit seed-arange-traced-size --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: torch-mlir-opt %t.ts.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:arange-traced-size}
// IMPORT:      %[[END:.*]] = torch.aten.ScalarImplicit %{{.*}} : !torch.tensor<[],si64> -> !torch.number
// IMPORT:      torch.aten.arange %[[END]], {{.*}} : !torch.number, {{.*}} loc({{.*}}"aten::arange"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// Both pipelines, traced: a linalg.generic over linalg.index builds the range.
// RUN: torch-mlir-opt %t.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// TRACED-LABEL:   func.func @forward(
// EXPORTED-LABEL: func.func @main(
// LINALG-SAME:   %[[X:.*]]: tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
// LINALG:        %[[EMPTY:.*]] = tensor.empty() : tensor<5xi64>
// LINALG:        %[[RANGE:.*]] = linalg.generic {{.*}} outs(%[[EMPTY]] : tensor<5xi64>)
// LINALG:          linalg.index 0 : index
// LINALG:        linalg.generic {{.*}} ins(%[[RANGE]], %{{.*}} : tensor<5xi64>, tensor<5x1xi64>) outs(%{{.*}} : tensor<5x5xi1>)
// LINALG:          arith.cmpi slt
// LINALG:        linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<5x5xf32>, tensor<1x5x5xf32>)
// LINALG-NOT:    torch.
// LINALG:        return %{{.*}} : tensor<1x5x5xf32>

// The FX import: the size is the constant 5 already, an arange.start_step of ints.
// RUN: %PYTHON -m harness emit seed-arange-traced-size --importer fx --cache %harness-ir-cache -q -o %t.fx.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.fx.mlir
// FX-IMPORT-NOT: !torch.number
// FX-IMPORT:     %[[FIVE:.*]] = torch.constant.int 5
// FX-IMPORT:     torch.aten.arange.start_step %{{.*}}, %[[FIVE]], %{{.*}} : !torch.int, !torch.int, !torch.int,
// FX-IMPORT-NOT: !torch.number
// It lowers to the same linalg.
// RUN: torch-mlir-opt %t.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED

// The fix, `torch.arange(int(mask.size(-1)))`: the end is the int constant 5, and it lowers the
// same way through either importer.
// RUN: %PYTHON -m harness emit seed-arange-traced-size-fixed --cache %harness-ir-cache -q -o %t.fixed.ts.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.fixed.ts.mlir
// FIXED-IMPORT-NOT: !torch.number
// FIXED-IMPORT:     %[[FIVE:.*]] = torch.constant.int 5
// FIXED-IMPORT:     torch.aten.arange %[[FIVE]], {{.*}} : !torch.int,
// FIXED-IMPORT-NOT: !torch.number
// RUN: torch-mlir-opt %t.fixed.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// RUN: %PYTHON -m harness emit seed-arange-traced-size-fixed --importer fx --cache %harness-ir-cache -q -o %t.fixed.fx.mlir
// RUN: torch-mlir-opt %t.fixed.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED
