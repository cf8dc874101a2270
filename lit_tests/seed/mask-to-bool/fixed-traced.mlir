// Seed idiom 4, mask-to-bool, the fix `mask == 0` traced through our TorchScript importer (2022
// and now: README.md here): the integer mask is compared with zero, no float compare.

// RUN: %PYTHON -m harness emit seed-mask-to-bool-fixed --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=FIXED,FIXED-TRACED
