// Seed idiom 2: torch.full with a torch.tensor fill value (OPT's causal mask,
// `torch.full((t, t), torch.tensor(float("-inf")))`), harness.models.seed.FullWithTensorFill,
// and its fix.
//
// 2022 (walkthrough): the fill value is traced as a 0-d tensor passed as !torch.number, and
// the shape function call of aten.full failed to verify:
//   error: 'func.call' op operand type mismatch: expected operand type '!torch.float', but
//   provided '!torch.number' for operand number 1
// Fixed by a plain float fill value, `torch.full((t, t), float("-inf"))`.
// Now: the traced IR still has the number fill value at the idiom's line, and both importers
// lower the idiom and its fix to linalg-on-tensors: the -inf fill becomes a constant
// (0xFF800000) that the triu linalg.generic selects from (the FX path decomposes triu into
// arange/compare/where first, so only the constant and the final add are common).

// RUN: %PYTHON -m harness emit seed-full-tensor-fill --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: torch-mlir-opt %t.ts.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:full-tensor-fill}
// IMPORT:      %[[FILL:.*]] = torch.aten.ScalarImplicit %{{.*}} : !torch.tensor<[],f32> -> !torch.number
// IMPORT:      torch.aten.full %{{.*}}, %[[FILL]], {{.*}} : !torch.list<int>, !torch.number, {{.*}} loc({{.*}}"aten::full"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// TRACED-LABEL:   func.func @forward(
// EXPORTED-LABEL: func.func @main(
// LINALG-SAME:      %[[X:.*]]: tensor<1x5x5xf32>) -> tensor<1x5x5xf32>
// LINALG:           %[[NEGINF:.*]] = arith.constant dense<0xFF800000> : tensor<5x5xf32>
// LINALG:           linalg.generic {{.*}} ins({{.*}}%[[NEGINF]]{{.*}} : {{.*}}tensor<5x5xf32>
// LINALG:             arith.select
// LINALG:           linalg.generic {{.*}} ins(%{{.*}}, %[[X]] : tensor<5x5xf32>, tensor<1x5x5xf32>)
// LINALG-NOT:       torch.
// LINALG:           return

// The FX import: torch.export turns the 0-d fill tensor into a float constant (a full_like).
// RUN: %PYTHON -m harness emit seed-full-tensor-fill --importer fx --cache %harness-ir-cache -q -o %t.fx.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.fx.mlir
// FX-IMPORT-NOT: !torch.number
// FX-IMPORT:     %[[NEGINF:.*]] = torch.constant.float 0xFFF0000000000000
// FX-IMPORT:     torch.aten.full_like %{{.*}}, %[[NEGINF]], {{.*}} : !torch.vtensor<[5,5],f32>, !torch.float,
// FX-IMPORT-NOT: !torch.number
// RUN: torch-mlir-opt %t.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED

// The fix: a !torch.float fill value, lowered the same way.
// RUN: %PYTHON -m harness emit seed-full-tensor-fill-fixed --cache %harness-ir-cache -q -o %t.fixed.ts.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.fixed.ts.mlir
// FIXED-IMPORT-NOT: !torch.number
// FIXED-IMPORT:     %[[NEGINF:.*]] = torch.constant.float 0xFFF0000000000000
// FIXED-IMPORT:     torch.aten.full %{{.*}}, %[[NEGINF]], {{.*}} : !torch.list<int>, !torch.float,
// FIXED-IMPORT-NOT: !torch.number
// RUN: torch-mlir-opt %t.fixed.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// RUN: %PYTHON -m harness emit seed-full-tensor-fill-fixed --importer fx --cache %harness-ir-cache -q -o %t.fixed.fx.mlir
// RUN: torch-mlir-opt %t.fixed.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED
