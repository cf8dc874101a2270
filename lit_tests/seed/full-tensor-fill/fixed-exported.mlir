// Seed idiom 2, full-tensor-fill, the fix `torch.full((t, t), float("-inf"))` exported through
// torch.export and the FX importer (2022 and now: README.md here): it lowers to the same linalg
// as the idiom.

// RUN: %PYTHON -m harness emit seed-full-tensor-fill-fixed --importer fx --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:fx-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,EXPORTED
