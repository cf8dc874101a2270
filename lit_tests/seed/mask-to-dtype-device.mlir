// Seed idiom 3: `.to(dtype)` and `.to(device)` round trips of the causal mask, on two lines as
// in OPT: `mask.to(dtype)` ending _make_causal_mask, `.to(inputs_embeds.device)` on its result
// in the caller; harness.models.seed.MaskToDtypeAndDevice, and its fix.
//
// 2022 (walkthrough):
//   error: failed to legalize operation 'torch.aten.to.dtype_layout' that was explicitly
//   marked illegal
// located at the caller's `.to(inputs_embeds.device)` line, which the walkthrough took for the
// wrong line (it blamed `mask.to(dtype)`); fixed by dropping the `.to(...)` calls.
// Now: the trace records `mask.to(dtype)` as aten.to.dtype at its own line and `.to(device)`
// as aten.to.dtype_layout at the caller's line, so the 2022 location was right: the
// dtype_layout op is the `.to(device)`. The torchscript pipeline folds both no-op casts away:
// the idiom and its fix lower to linalg-on-tensors. torch.export records no `.to` at all.
// (Given straight to the linalg pipeline, to.dtype_layout still fails: see
// lit_tests/pass/to-dtype-layout-error.mlir.)

// Each `.to` at its own Python line (locations printed inline: the caller's line is also the
// function's location, whose alias is printed before the ops).
// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: torch-mlir-opt %t.ts.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DDTYPE_LINE=%{seed-line:mask-to-dtype-device-dtype} -DLINE=%{seed-line:mask-to-dtype-device}
// IMPORT:      torch.aten.to.dtype %{{.*}} : !torch.tensor<[5,5],f32>, !torch.int, {{.*}} -> !torch.tensor<[5,5],f32> loc({{.*}}"aten::to"("{{.*}}seed.py":[[DTYPE_LINE]]:{{[0-9]+}})
// IMPORT:      torch.aten.to.dtype_layout %{{.*}} : !torch.tensor<[5,5],f32>, !torch.int, !torch.int, !torch.Device, {{.*}} loc({{.*}}"aten::to"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.ts.mlir %{pipeline:torchscript-to-torch} | FileCheck %s --check-prefix=BACKEND
// BACKEND-LABEL: func.func @forward(
// BACKEND-NOT:     torch.aten.to.
// BACKEND:         return

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

// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device --importer fx --cache %harness-ir-cache -q -o %t.fx.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.fx.mlir
// FX-IMPORT-LABEL: func.func @main(
// FX-IMPORT-NOT:     torch.aten.to.
// FX-IMPORT-NOT:     torch.aten._to_copy
// FX-IMPORT:         return
// RUN: torch-mlir-opt %t.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED

// The fix: the mask is built in x's dtype; there is no `.to` to fold.
// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device-fixed --cache %harness-ir-cache -q -o %t.fixed.ts.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.fixed.ts.mlir
// FIXED-IMPORT-NOT: torch.aten.to.
// FIXED-IMPORT:     torch.aten.full
// FIXED-IMPORT-NOT: torch.aten.to.
// RUN: torch-mlir-opt %t.fixed.ts.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,TRACED
// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device-fixed --importer fx --cache %harness-ir-cache -q -o %t.fixed.fx.mlir
// RUN: torch-mlir-opt %t.fixed.fx.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %s --check-prefixes=LINALG,EXPORTED
