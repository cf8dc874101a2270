// x[mask] = v where the boolean mask selects nothing (wav2vec2's `hidden_states[~mask] = 0`,
// modeling_wav2vec2.py:671, with an all-ones attention mask; hubert, data2vec-audio, sew and
// unispeech copy the line): torch-mlir's DecomposeAtenIndexPutLikeOp (llvm/torch-mlir#4702)
// turns it into nonzero + index_put.hacked_twin, and the nonzero of an all-false mask gives
// index tensors of size 0, as this function takes them.
// TorchToTMTensor's getBroadcastShape (lib/Conversion/TorchToTMTensor/TorchToTMTensor.cpp)
// sizes the indices' broadcast as prim.max.int(size, 1) (its sizes start at the constant 1):
// 1 for size-0 indices, where PyTorch broadcasts 0 and 1 to 0. The broadcast_to that follows
// then reads element 0 of an empty tensor: an out-of-bounds memref.load under MLIR's runtime
// op verification (SIGSEGV or garbage without it). Bundle:
// reports/upstream/index-put-empty-mask-broadcast-oob/.
//
// Now: the broadcast size is max(size, 1) and the checked run dies naming the load. When
// upstream sizes the broadcast by PyTorch's rule, the LINALG lines fail and `harness check`
// verifies (index_put with empty indices changes nothing): then make this a test that it runs.

// RUN: torch-mlir-opt %s %{pipeline:function-to-torch} -o %t.torch.mlir
// RUN: torch-mlir-opt %t.torch.mlir %{pipeline:torch-to-linalg} | FileCheck %s --check-prefix=LINALG
// RUN: %PYTHON -c "import numpy as np; e = np.zeros(0, 'i8'); np.savez('%t.npz', np.ones((1, 4, 8), 'f4'), e, e, e, np.zeros((), 'f4'))"
// RUN: not %PYTHON -m harness check %t.torch.mlir --pipeline torch-to-linalg --inputs %t.npz --runtime-checks --out %t.d --no-progress | FileCheck %s --check-prefix=RUNS

// LINALG-LABEL: func.func @masked_fill_nothing
// LINALG:       %[[ONE:.*]] = arith.constant 1 : i64
// LINALG:       arith.maxsi %{{.*}}, %[[ONE]] : i64
// LINALG:       tm_tensor.scatter

// RUNS:      fails at execution: @masked_fill_nothing
// RUNS:      the code died by SIGABRT: ERROR: Runtime op verification failed
// RUNS-NEXT: memref.load
// RUNS-NEXT: ^ out-of-bounds access

func.func @masked_fill_nothing(%x: !torch.vtensor<[1,4,8],f32>, %i0: !torch.vtensor<[?],si64>, %i1: !torch.vtensor<[?],si64>, %i2: !torch.vtensor<[?],si64>, %v: !torch.vtensor<[],f32>) -> !torch.vtensor<[1,4,8],f32> {
  %false = torch.constant.bool false
  %0 = torch.prim.ListConstruct %i0, %i1, %i2 : (!torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>, !torch.vtensor<[?],si64>) -> !torch.list<vtensor>
  %1 = torch.aten.index_put.hacked_twin %x, %0, %v, %false : !torch.vtensor<[1,4,8],f32>, !torch.list<vtensor>, !torch.vtensor<[],f32>, !torch.bool -> !torch.vtensor<[1,4,8],f32>
  return %1 : !torch.vtensor<[1,4,8],f32>
}
