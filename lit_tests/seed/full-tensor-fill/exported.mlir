// Seed idiom 2, full-tensor-fill, exported through torch.export and the FX importer (2022 and
// now: README.md here). torch.export turns the 0-d fill tensor into a float constant (a
// full_like), and it lowers to the same linalg as the traced import.

// RUN: %PYTHON -m harness emit seed-full-tensor-fill --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FX-IMPORT --input-file %t.mlir
// FX-IMPORT-NOT: !torch.number
// FX-IMPORT:     %[[NEGINF:.*]] = torch.constant.float 0xFFF0000000000000
// FX-IMPORT:     torch.aten.full_like %{{.*}}, %[[NEGINF]], {{.*}} : !torch.vtensor<[5,5],f32>, !torch.float,
// FX-IMPORT-NOT: !torch.number

// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
