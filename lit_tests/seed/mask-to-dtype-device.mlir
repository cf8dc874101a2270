// Seed idiom 3: `.to(dtype)` and `.to(device)` round trips of the causal mask
// (`mask.to(dtype)`, `.to(inputs_embeds.device)`), harness.drivers.seed.MaskToDtypeAndDevice,
// and its fix.
//
// 2022 (walkthrough):
//   error: failed to legalize operation 'torch.aten.to.dtype_layout' that was explicitly
//   marked illegal
// located at the wrong line; fixed by dropping the `.to(...)` calls.
// Now: the trace still records aten.to.dtype and aten.to.dtype_layout at the idiom's line, and
// the torchscript pipeline folds both no-op casts away: the idiom and its fix lower to
// linalg-on-tensors. torch.export records no `.to` at all. (Given straight to the linalg
// pipeline, to.dtype_layout still fails: see lit_tests/pass/to-dtype-layout-error.mlir.)

// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device --cache %harness-ir-cache -q -o %t.ts.mlir
// RUN: FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:mask-to-dtype-device} --input-file %t.ts.mlir
// IMPORT:      torch.aten.to.dtype {{.*}} loc(#[[LOC:loc[0-9]+]])
// IMPORT:      torch.aten.to.dtype_layout {{.*}} : !torch.tensor<[5,5],f32>, {{.*}} loc(#[[LOC]])
// IMPORT:      #[[LOC]] = loc("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

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
