// %harness-ir-cache names a directory lit.cfg.py made for emitted model IR, keyed by the
// package versions recorded in its versions.json.

// RUN: %PYTHON -c "import json, os, sys; d = sys.argv[1]; assert os.path.isdir(d), d; print(sorted(json.load(open(os.path.join(d, 'versions.json')))))" %harness-ir-cache | FileCheck %s
// CHECK: ['torch', 'torch-mlir', 'torch-mlir-harness', 'transformers']
