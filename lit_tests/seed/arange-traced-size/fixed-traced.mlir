// Seed idiom 1, arange-traced-size, the fix `torch.arange(int(mask.size(-1)))` traced through our
// TorchScript importer (2022 and now: README.md here): the end is the int constant 5, and it
// lowers to the same linalg as the idiom.

// RUN: %PYTHON -m harness emit seed-arange-traced-size-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.mlir
// FIXED-IMPORT-NOT: !torch.number
// FIXED-IMPORT:     %[[FIVE:.*]] = torch.constant.int 5
// FIXED-IMPORT:     torch.aten.arange %[[FIVE]], {{.*}} : !torch.int,
// FIXED-IMPORT-NOT: !torch.number

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
