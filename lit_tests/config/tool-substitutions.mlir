// torch-mlir-opt and FileCheck are substituted where they stand as a word (lit's ToolSubst
// regex), never inside a path or a longer name; `not --crash` runs our support/not, the `not`
// that lit.cfg.py puts first on the test's PATH.

// Each tool name becomes the resolved command (a path: two words with a separator, whatever the
// binaries are called); the same name inside a path, a file name or a longer word stays as written.
// RUN: echo torch-mlir-opt FileCheck /x/torch-mlir-opt x.FileCheck torch-mlir-opt.mlir FileCheck-x my-torch-mlir-opt | FileCheck %s --check-prefix=WORDS
// WORDS: {{^[^ ]*[/\\][^ ]* [^ ]*[/\\][^ ]* /x/torch-mlir-opt x.FileCheck torch-mlir-opt.mlir FileCheck-x my-torch-mlir-opt$}}

// The `not` on the test's PATH is ours.
// RUN: %PYTHON -c "import shutil; print(shutil.which('not'))" | FileCheck %s --check-prefix=WHICH
// WHICH: {{.*}}lit_tests{{[/\\]}}support{{[/\\]}}not{{$}}

// `not --crash` passes on a crash and only then (lit hands `not not --crash` to ours whole: its
// plain `not` runs the inner `not --crash`).
// RUN: not --crash %PYTHON -c "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
// RUN: not not --crash %PYTHON -c "raise SystemExit(1)" 2>&1 | FileCheck %s --check-prefix=NOCRASH
// NOCRASH: not --crash: {{.*}}python{{.*}} exited 1 instead of crashing
// RUN: not not --crash %PYTHON -c "pass"
