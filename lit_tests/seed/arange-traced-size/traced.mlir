// Seed idiom 1, arange-traced-size, traced through our TorchScript importer (2022 and now:
// README.md here). The import keeps the idiom: a !torch.number end for aten.arange, at the
// Python line of the idiom; both pipelines lower it to linalg.

// RUN: %PYTHON -m harness emit seed-arange-traced-size --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:arange-traced-size}
// IMPORT:      %[[END:.*]] = torch.aten.ScalarImplicit %{{.*}} : !torch.tensor<[],si64> -> !torch.number
// IMPORT:      torch.aten.arange %[[END]], {{.*}} : !torch.number, {{.*}} loc({{.*}}"aten::arange"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
