// Seed idiom 1, arange-traced-size, exported through torch.export and the FX importer (2022 and
// now: README.md here). torch.export specializes the size: the end is the constant 5, an
// arange.start_step of ints, and it lowers to the same linalg as the traced import.

// RUN: %PYTHON -m harness emit seed-arange-traced-size --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.mlir
// FX-IMPORT-NOT: !torch.number
// FX-IMPORT:     %[[FIVE:.*]] = torch.constant.int 5
// FX-IMPORT:     torch.aten.arange.start_step %{{.*}}, %[[FIVE]], %{{.*}} : !torch.int, !torch.int, !torch.int,
// FX-IMPORT-NOT: !torch.number

// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
