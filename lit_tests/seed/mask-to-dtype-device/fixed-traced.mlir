// Seed idiom 3, mask-to-dtype-device, the fix (the mask built in x's dtype, no `.to`) traced
// through our TorchScript importer (2022 and now: README.md here): there is no `.to` to fold, and
// it lowers to the same linalg as the idiom.

// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.mlir
// FIXED-IMPORT-NOT: torch.aten.to.
// FIXED-IMPORT:     torch.aten.full
// FIXED-IMPORT-NOT: torch.aten.to.

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
