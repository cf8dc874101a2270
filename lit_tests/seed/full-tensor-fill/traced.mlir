// Seed idiom 2, full-tensor-fill, traced through our TorchScript importer (2022 and now:
// README.md here). The import keeps the idiom: the fill value is a !torch.number, at the Python
// line of the idiom; both pipelines lower it to linalg.

// RUN: %PYTHON -m harness emit seed-full-tensor-fill --cache %harness-ir-cache -q -o %t.mlir
// RUN: torch-mlir-opt %t.mlir --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=IMPORT -DLINE=%{seed-line:full-tensor-fill}
// IMPORT:      %[[FILL:.*]] = torch.aten.ScalarImplicit %{{.*}} : !torch.tensor<[],f32> -> !torch.number
// IMPORT:      torch.aten.full %{{.*}}, %[[FILL]], {{.*}} : !torch.list<int>, !torch.number, {{.*}} loc({{.*}}"aten::full"("{{.*}}seed.py":[[LINE]]:{{[0-9]+}})

// RUN: torch-mlir-opt %t.mlir %{pipeline:torchscript-to-torch} | torch-mlir-opt %{pipeline:torch-to-linalg} | FileCheck %S/linalg.checks --check-prefixes=LINALG,TRACED
