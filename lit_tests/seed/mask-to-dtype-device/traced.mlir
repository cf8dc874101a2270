// Seed idiom 3, mask-to-dtype-device, traced through our TorchScript importer (2022 and now:
// README.md here). Each `.to` is at its own Python line; the torchscript pipeline folds both
// away, and the result lowers to linalg.

// Locations printed inline: the caller's line is also the function's location, whose alias is
// printed before the ops.
// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DDTYPE_LINE=%{seed-line:mask-to-dtype-device-dtype} -DLINE=%{seed-line:mask-to-dtype-device}
// IMPORT:      torch.aten.to.dtype %{{.*}} : !torch.tensor<[5,5],f32>, !torch.int, {{.*}} -> !torch.tensor<[5,5],f32> loc({{.*}}"aten::to"("{{.*}}seed.py":[[DTYPE_LINE]]:{{[0-9]+}})
// IMPORT:      torch.aten.to.dtype_layout %{{.*}} : !torch.tensor<[5,5],f32>, !torch.int, !torch.int, !torch.Device, {{.*}} loc({{.*}}"aten::to"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | FileCheck %s --check-prefix=BACKEND
// BACKEND-LABEL: func.func @forward(
// BACKEND-NOT:     torch.aten.to.
// BACKEND:         return

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
