// Seed idiom 2, full-tensor-fill, the fix `torch.full((t, t), float("-inf"))` traced through our
// TorchScript importer (2022 and now: README.md here): a !torch.float fill value, lowered to the
// same linalg as the idiom.

// RUN: %PYTHON -m harness emit seed-full-tensor-fill-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: FileCheck %s --check-prefix=FIXED-IMPORT --input-file %t.mlir
// FIXED-IMPORT-NOT: !torch.number
// FIXED-IMPORT:     %[[NEGINF:.*]] = torch.constant.float 0xFFF0000000000000
// FIXED-IMPORT:     torch.aten.full %{{.*}}, %[[NEGINF]], {{.*}} : !torch.list<int>, !torch.float,
// FIXED-IMPORT-NOT: !torch.number

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
