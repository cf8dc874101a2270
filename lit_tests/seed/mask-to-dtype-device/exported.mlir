// Seed idiom 3, mask-to-dtype-device, exported through torch.export and the FX importer (2022
// and now: README.md here). torch.export records no `.to` at all, and the import lowers to the
// same linalg as the traced one.

// RUN: %PYTHON -m harness emit seed-mask-to-dtype-device --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.mlir
// FX-IMPORT-LABEL: func.func @main(
// FX-IMPORT-NOT:     torch.aten.to.
// FX-IMPORT-NOT:     torch.aten._to_copy
// FX-IMPORT:         return

// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
