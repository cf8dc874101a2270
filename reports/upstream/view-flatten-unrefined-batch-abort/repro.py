#!/usr/bin/env python3
"""Reproduces: the code dies by SIGABRT: runtime op verification failed: memref.store: out-of-bounds access at run time

    python3 repro.py

Needs only torch 2.13.0+cpu, torch-mlir 20261001 (its MLIR Python bindings, PassManager and
ExecutionEngine) and numpy: nothing else, no file of this folder. It lowers the embedded IR to linalg and then to LLVM with the RefBackend's passes and runs it on the ExecutionEngine with the embedded arguments; the bug is that the run dies.

Exit status: 1 exactly when the bug shows (the run dies); 0 when it does not;
2 when it cannot tell (torch_mlir or numpy missing, or the run timed out).
The work runs in a child process (this file with --child), so a crash or an abort is an
outcome, not the end of this script.

Made by torch-mlir-harness's `harness report`; the script itself does not use the harness.
"""

import base64
import ctypes
import io
import os
import signal
import subprocess
import sys
import tempfile

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 2
KIND = 'runtime-failure'  # "compile-failure": a pass fails; "miscompile": wrong values;
# "runtime-failure": the code dies
TIMEOUT_S = 600.0

# The IR, the pipelines and the summary at the top are verbatim (the IR one op a line, as
# torch-mlir prints it), so their lines may be long:
# ruff: noqa: E501

# The IR (reduced.mlir of the bundle).
IR = r'''#loc1 = loc("<root>.model.h.0.ln_1.bias")
#loc2 = loc("<site-packages>/transformers/pytorch_utils.py":120:0)
#loc3 = loc("<site-packages>/transformers/models/gpt2/modeling_gpt2.py":187:0)
#loc4 = loc("<site-packages>/transformers/utils/deprecation.py":173:0)
#loc5 = loc("<site-packages>/transformers/models/gpt2/modeling_gpt2.py":277:0)
#loc6 = loc("<site-packages>/transformers/modeling_layers.py":124:0)
#loc7 = loc("<site-packages>/transformers/models/gpt2/modeling_gpt2.py":608:0)
#loc8 = loc("<site-packages>/transformers/utils/output_capturing.py":361:0)
#loc9 = loc("<site-packages>/transformers/utils/generic.py":1182:0)
#loc10 = loc("<repo>/harness/models/hf.py":120:0)
#loc11 = loc("<site-packages>/torch/nn/functional.py":2987:0)
#loc12 = loc("<site-packages>/torch/nn/modules/normalization.py":228:0)
#loc13 = loc("<site-packages>/transformers/models/gpt2/modeling_gpt2.py":276:0)
#loc16 = loc("aten::view"(#loc2))
#loc17 = loc(callsite(#loc9 at #loc10))
#loc18 = loc("aten::layer_norm"(#loc11))
#loc20 = loc(callsite(#loc8 at #loc17))
#loc21 = loc(callsite(#loc4 at #loc20))
#loc22 = loc(callsite(#loc7 at #loc21))
#loc23 = loc(callsite(#loc6 at #loc22))
#loc24 = loc(callsite(#loc4 at #loc23))
#loc25 = loc(callsite(#loc5 at #loc24))
#loc26 = loc(callsite(#loc13 at #loc24))
#loc27 = loc(callsite(#loc4 at #loc25))
#loc28 = loc(callsite(#loc12 at #loc26))
#loc29 = loc(callsite(#loc3 at #loc27))
#loc30 = loc(callsite(#loc18 at #loc28))
#loc32 = loc(callsite(#loc16 at #loc29))
module attributes {torch.debug_module_name = "gpt2"} {
  func.func @forward(%arg0: !torch.vtensor<[64],f32> loc("<root>.model.h.0.ln_1.bias"), %arg1: !torch.vtensor<[?,?,?],f32> loc(callsite(#loc16 at #loc29)), %arg2: !torch.vtensor<[?,?,64],f32> loc(callsite(#loc18 at #loc28))) -> !torch.vtensor<[?,?],f32> {
    %int1 = torch.constant.int 1 loc(#loc)
    %int-1 = torch.constant.int -1 loc(#loc)
    %int2 = torch.constant.int 2 loc(#loc)
    %int3 = torch.constant.int 3 loc(#loc)
    %int64 = torch.constant.int 64 loc(#loc)
    %0 = torch.aten.add.Tensor %arg2, %arg0, %int1 : !torch.vtensor<[?,?,64],f32>, !torch.vtensor<[64],f32>, !torch.int -> !torch.vtensor<[?,?,64],f32> loc(#loc30)
    %1 = torch.prim.ListConstruct %int-1, %int64 : (!torch.int, !torch.int) -> !torch.list<int> loc(#loc33)
    %2 = torch.aten.view %0, %1 : !torch.vtensor<[?,?,64],f32>, !torch.list<int> -> !torch.vtensor<[?,?],f32> loc(#loc34)
    %3 = torch.aten.size.int %arg1, %int2 : !torch.vtensor<[?,?,?],f32>, !torch.int -> !torch.int loc(#loc31)
    %4 = torch.aten.add.int %3, %int64 : !torch.int, !torch.int -> !torch.int loc(#loc31)
    %5 = torch.aten.sub.int %4, %int1 : !torch.int, !torch.int -> !torch.int loc(#loc31)
    %6 = torch.aten.floordiv.int %5, %int64 : !torch.int, !torch.int -> !torch.int loc(#loc31)
    %7 = torch.aten.eq.int %6, %int3 : !torch.int, !torch.int -> !torch.bool loc(#loc31)
    torch.runtime.assert %7, "numResults should equal to floordiv(totalSize + splitSize - 1, splitSize)" loc(#loc31)
    return %2 : !torch.vtensor<[?,?],f32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc14 = loc("<site-packages>/transformers/pytorch_utils.py":119:0)
#loc15 = loc("<site-packages>/transformers/models/gpt2/modeling_gpt2.py":188:0)
#loc19 = loc("aten::view"(#loc14))
#loc31 = loc(callsite(#loc15 at #loc27))
#loc33 = loc(callsite(#loc14 at #loc29))
#loc34 = loc(callsite(#loc19 at #loc29))
'''

# torch dialect -> linalg on tensors (torch-mlir-opt runs the same), then the RefBackend's
# lowering of linalg to LLVM (upstream's refbackend.py runs the same passes).
TO_LINALG = 'builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline)'
TO_LLVM = 'builtin.module(func.func(linalg-generalize-named-ops),func.func(linalg-fuse-elementwise-ops),convert-shape-to-std,sparse-assembler{direct-out},sparsification-and-bufferization,sparse-storage-specifier-to-llvm,func.func(expand-realloc),func.func(refback-generalize-tensor-pad),func.func(refback-generalize-tensor-concat),func.func(tm-tensor-bufferize),one-shot-bufferize{copy-before-write bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},refback-mlprogram-bufferize,func.func(buffer-deallocation-pipeline),inline,refback-munge-calling-conventions,func.func(tm-tensor-to-loops),func.func(refback-munge-memref-copy),func.func(convert-linalg-to-loops),func.func(lower-affine),convert-scf-to-cf,generate-runtime-verification,func.func(refback-expand-ops-for-llvm),func.func(arith-expand),func.func(convert-math-to-llvm),convert-math-to-libm,expand-strided-metadata,finalize-memref-to-llvm,lower-affine,convert-scf-to-cf,convert-bufferization-to-memref,finalize-memref-to-llvm,func.func(convert-arith-to-llvm),convert-vector-to-llvm,convert-func-to-llvm,convert-cf-to-llvm,convert-complex-to-llvm,reconcile-unrealized-casts)'
FUNCTION = 'forward'

# "compile-failure": the error MLIR must print for the bug to show.
EXPECTED_ERROR = ''

# The arguments, and what eager PyTorch computes on them (op by op), as .npz files in base64:
#   argument arg0: float32[64]
#   argument arg1: float32[1, 8, 192]
#   argument arg2: float32[1, 8, 64]
#   expected result0: float32[8, 64]

INPUTS_NPZ = (
    'UEsDBC0AAAAAAAAAIQBFI22///////////8IABQAYXJnMC5ucHkBABAAgAEAAAAAAACAAQAAAAAAAJNOVU1QWQEAdgB7J2Rl'
    'c2NyJzogJzxmNCcsICdmb3J0cmFuX29yZGVyJzogRmFsc2UsICdzaGFwZSc6ICg2NCwpLCB9ICAgICAgICAgICAgICAgICAg'
    'ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAKAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'
    'AAAAAAAAAAAAAFBLAwQtAAAAAAAAACEAI+hANP//////////CAAUAGFyZzEubnB5AQAQAIAYAAAAAAAAgBgAAAAAAACTTlVN'
    'UFkBAHYAeydkZXNjcic6ICc8ZjQnLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMSwgOCwgMTkyKSwgfSAg'
    'ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgCvAyV7xagIM9BOdnPdiG5DzUC1M+'
    'OxWUPTni+r3R35w9i6jvPbRuw71xCZI+8RgBvnhqz73dVsO8opeiPbA4Lz0lJWc8/ATqvRNOMr74dEY+0J5DPrVozT13ASC+'
    'fCpOvk2E2T0eIJw+2aDNOREU5j2HuTi9HD2svIfGM73OJyE9Uiz4vdpEVD4g8Au+YQx1PiuJ9z2R/Rw+eJS4vf0MFz4sMEq+'
    'hArAvC53arzMyde9iyXpvSXolz3D+pU9FqomvuDqEL0Ff569jEwgPuwjzz0anX6+D7h+vbhFX709f1w+DVKvPZKdQ740EhK5'
    '247SPWKsPr66BTC+H8aBPjCS2D2p12w++aacPplRc728vZY8sLecu+eLG71NRKu+DLDQvlJiHr5wl5693uD+OwTf5L3ilbo9'
    'DHsNPTtMxb0cWus5vg/Yu1e9bj6jX1O9D4uOPAos7b0vEks9cngEvf21iT5Ros49idv5vOeCMjw6JjO+ntE0vodIED7ebHW9'
    'oVmUvfzahD1r5VC++XldvlkZvr1kaZg8sGqPPMTZdj1vJju+m+vNvYJEhLxOx44+i30Uvr6yMb56eH69eVObPfJiPD41JTG+'
    'p3GIvQ90oL5xPU2+/mojvg7SVL7+6Vm9ZDeSPtKm970m5SU+H/iyPb3Ja72iNhc91X2avQvR0zxRBqW8hODyvUYNQD7YcuG9'
    'CkR7vZ1+cb7W5Zo9DnRDvtXITT1Sina9BvMLvsbRUL7/wlm++5/IvYMbJL2DuxS+PkDjPcE1Lz7YJ0m9yWW5PWvPCb5ft3M9'
    'b9+oPJj1nz21Opw+fDW+Pkre3b3ri04+lyeXPsun4zzzBN08kQ8svqpiUb2QUNG+8wqWvdyQJD4F8CS+O5+HvcMrI76SdmE+'
    'wfbAPcNdEj6cwcC92fiuPvW2cb3827+8VbXNuyrLZry8pD8+rMCOPt8SJ737xB+9etFevgZUKb7Fnkc+x4ravmAiKb0fObm+'
    'O8rJPbrFzD36WJq6+7e3PaIsZD2kk2i91toAPl79Kz7oJ6M8UHRiPsgmyb6u1NC+eShEPvj9oL1qg9W9gZwFvhM41z2NAVO9'
    'rWLTPIKlY72qf1E+5u8IvYE3J76jIso81fQsPaG0+b3vgZe9GdGBPl9AXr2E6628b7e7PA1lNj648y8+pqztvYzAwb6QMk+9'
    'rGcePY9NAj48NYO+/kYyPpZrNj3UK6Q+fzodPks8Ubw6zzu+sfzNvaYZGr6ciRm/vtVJvqEZ6j38IVo9YhGOPYIq0b0J/7K+'
    'Tf9MvmasiDyAif49W5ffPbRrxj11nbY7AdfCPR49vz1drUe+eMFnPrKcz7wZgee+BV7zvMmqjz6qQFC+ninovXRgbb4U3Oe+'
    'lGIqvnarCz75Ar69ElcoPJkjET6ssDO+MlFmPdML3b1+2sm9nVy0O7k6h75K8Cs+pNFyvXMcLz6fsrm9f5gMvRgrGL5tI1c+'
    'YeExPlaclb0BXwu+5fVrvuIPJT7qeiy+6ezfPdY5DL0bE5S9n23Dvl4BX73nnB2+A7FcvkU5ST7UnEU+rSuQPcPEjjwOiWU+'
    '0o8aPouyAzxmAUe9WqpHOyqysbz+gXO+1EwKuyYnRL7/P8g9M6U8PvrIQr4X0wO+frnQPLxaoT77j5M82fM3vm982T3cVnG+'
    'PhifPLJCA72lSjI+tQA4PaA+CT4UKyg+p8IbvRs+az5Ck+o9p9RPPnIEPTzbeye+eRCKPq6xFD6hTrU9pDI+PZGlFD6VBXM+'
    'REmwPYObSb318Ta9IIxjPUIJwr1FlGY8aoYxvT+ZQb1TFOI8btVPPqrAob0fM4+8QsH2vQQbg7rHWLI95s3vvU8/Pbz7vJO9'
    'pnwBvlw/oj3YSwg+FMCOPidcFj1qhKq9kzRgviWKMj672cm9eoAHPtRD3r7ChKu+g/ZIvq5f9Tw2t3w960g6vjn7iT5l7D8+'
    'qUdRPouVg7wTTTa++USlvsLBfr6y/pw93H/IvRW/lzw5sn+8XYSjPSYE/L2nSwO+G4U+PnSXIr4kE5W9sA1lvr6IWz5x/6a9'
    '8iThvW+qlj7oepO+tdMAPkf5gD7TeIM+g23KPcEx8b1Xhfe9Eu31vfHZCT7IIey8tRYSPpSxYr7+EDQ+VXyQPJ8AGL58KYI+'
    '+aeFPuwzVr0dBYa9oMMzPdTmaz6rOsW9Rk6BvZGHLr6ZHd48NEwXvoIwEj7pvFK++FiDvbyUFD7H8KG9pfk1vnTbVb1brQA+'
    'NVTzu7CJzzrC3Aw+YzUOPuzz5T07DIO9oYzPPbUsgr12Es+8zAgjvXRm4L0Y0Ue+ISQCvztm+b2C+U492OerPvob+z342Ji+'
    'OHBVPiy8pzxICxs+eNkKvXgc6DxRwiS+y76rutolAb6o4DM+oo2OvWt13D0ymiu+vDd4Ppm6BT4UH3s+3WabPjqR/zvmMP07'
    'ksfhvWkD2L1Ma6e9h7MxvpZOHj6patg+LfqnvaELhb3TAm49M3ERv5B9aL5AEAA+OKpsPpm3m71wzi08T5roPSiQ+j25X+I8'
    'wPqnPs+kAL7SJAK+Q5hnvkneUr1xOhq+Kzn7PXo4pL1qH26+J8CMveK0Jz5yYZ89k5kgPZVV+r1WRHE+W0u9vF1vNr5EuUG8'
    'Dz0/voDWFL5Yyb285J+PPuA8LL7XUqs9Cu3UvvhKIj5iyd27eK8oPHN5iT3WEGA9ZHY+vo49BL5Xs0y+ffOWvp250Lv1Iqw8'
    'oDtavTe7LL58tIQ9qMRmu403MT7jQSU+wmnDvaq6Br4lZ2w+Ac4APtA6cz0IEk49B4LKPRJTAL7ltJY9D/SXPhTaPL3HETQ9'
    'Os0Xu0c8DL7ANNE9osURvVqtBb5UyyM+HkPfvCTWLb7T0Ac+leMMPjlIAT458ye+4663vd2p7jw7jVM9GWS+vd4PD75iT5C+'
    '7LdNvqZZnL0UeU08E92XvX6uSr79YOy96FclvjXlOL6hqbM8DyLavLpO1jzJDDG9zekcPn0Tnj3fbL686xFUvkxfXD4tBN0+'
    'hZuLPfaVMT5FNUG+lEwTvtzpHz5YU5s8hXk1OyQwG74Atgg9dyF1PXXL7T1D0gY+ERFHvvF2jD5JNZS+b1qmvJbogb6Zgo29'
    'ci2lPJ2VWL5Ql6Q9WitjvtfSib2dNKc9BX5VvrAiFzxMhH0++HufPYd+Qj0osbo9Vl3ivp6v4T2niBK+0Gv6vbQtNT5KWhM+'
    '12KpPoSVQbxTKXG9EdZpvYcIoTwhBaI9Y7v9PVEtoLzffHc+USa0PvW5U76D1a88rNZovq6Th732F6W++y6HvklpUL1Yzt09'
    'M/8GPus9vL0w/J29sjVXvjn5670uiJ294gSfPkKZpT7kBQI+U60TvlPWbL4y0+q9z1a8vWFDJbyuJx2+tqzqPYAyhz0OC9s+'
    'GnxzPg8WHL4cdJO7YIxcvRnsP717J+69eM64vb4c7L2Jyoy9yFhOvs9IIj42MB2+re6pvktE6D0Y0PO8q6O/uxNrJj2ruYq+'
    'hzqtPmYWFj6Qsbc9rU2zPT8C2z0y7eM9pn9tPpOUWj6oc8y95nuiPc8qkr7cIxu+r8lOPU7/6j3dRR4+dCSbPRUvHz5Vhzg9'
    'zTgVPtPRtT1MX4M9wp0AvmLgIT0+beo9uWUQvvECDz7VgwE+l+6FPbwgcr2+wrW9z0JrPuUMZLxVHgO+W/yVve3nx73MC769'
    'icA/vIySbz4XoqS9+gjKPS5cmj3AHVI9vby6OxvFVb6luaK9EfC8vRtO7L3QG3I9hfuXvMcl8719pwM+g4NoPdb+Xb5quzM9'
    'zk3yvReKhT7qfve8WnYBvF5WvD6FaZG+IzLYvS+q3T06DBO+CLt4vIWq+DxoAbk9wjGHvRpker1AIZS92g2NvaWq9T2WQdo9'
    'IlApPtwwjb5vUfG96xGovfJdHL7J200+6ZSbPab/s71HeDO+ctsMPYs1uD3PIZc9HZ21vE1Iib0mx5g+taGCvcp+OD0BawI9'
    'PkkrPEK8KL6cRpa9xOIDvhoVBj7V2Yw7DkpbPXVZFL3fsKu+x2TbPU//Xr71RBy+bDpOvUB/hL3jqfA9DjLlPZjR5LwW+u09'
    '13mYPZyhHz4QCrG8bbFovWsCNL2Gu7G98suAPraulD3udGO8GmZ5vKrNMz7+L1e+DBEYPGUexLxs4Dw+roVCvbJdxD3SLCk9'
    'poArPRahTD23PX49z+W0vHooRr6P6Jy9D/YZvUV3ob2cMRe+D3CkPZPJMz6i1Wk+EPEnPUDfUr6W/BU+AiabvfCM2L1QM5O+'
    'w3eqvdExJD42QKe8/vZivqGnrjxy9QW+xHisPZ8XAT0MIJ49luGuPd8mfD6sSjE+CsLavYYR4Lxuh1C+kiptPjPrD75qalA+'
    'dpNBPIF5fj6i6mS+cNzEvKEr3L2k0Ck+/2LmPDdKV73dAYo9fCeCvonLi71QnCM+sxZAvtSSjjxXQw8+6A1IvljxGDwf3sA9'
    '4POtvDOx8jwfZIY+vQRNPpy2Nz4XuRK+QjECvknpdD7PJAO8sWxKvbFq7D0e3U0+YkZVvolV4T2SqaY9v/P2PSw1h70Mm4o+'
    'dN+8vaZLAT6MIv6943I1PY9157zyu4A+qYm8PiYTjL7HMAg+6BpqvhLZAr5Nk0k9/dNJPmlBkb0fb829rMJJPYH/+TwuVly+'
    'Vw1uPjqwMr6VY9+8lusBPgbPaL4rniy+FpYePoCBTj6OhoW+hQYcvoBAFr6zE8G9wgXXPcI/dT59+xg96WZoPWLXHT7xdJ+9'
    'bg54viuYhz4XNPM9mYhaPghugD1t3My9uI7Iu7TDuj2mKxM+rAzGvQjVOD4QCgM9PM3UvLR6tL5hDia+yGpKvtryPb7Bxdu9'
    'tIFKvmhJ8r0QHKQ9VdomPLmD0zxPRBa9mYwgPkzvqr58tvy9n92YPbPHGj5yGws+DN2FvYpVrz0N9xu+KmJvvgWSIj46uNe+'
    'gFrZuw7eib7pjsa9TSABPgDaGD6wqgO9nF/FvfWBqbsKi/S9ADbiPl/qhL0EKTE+NaGvOyjZiLvU3zm+vS1ePvpZPr5Ws0I+'
    'QO5+PSUNDr0vkwk9DnSwvQGLljwfw1i9vg9avn4pIL7thoA+NVBvPjIANb5JM2w+U9pnvsrkLj21cam9EsRmvQBgyrsLumY9'
    'M44vPuDkU76pXPO9/0joPMzzpLtKWam+K3rJvl48oT1jZIS+1EX2Pc3gSj56UCG9dSC2vQE0CD58qpo+AxuAvkLm7j1Aegy+'
    'uSYAvqQKKj5esY47V1ZBvuhBfz62dh26YvWlvgOwEj6MwYE9ORQAvsn2XD6tZVw9BmZXPf5iGb6eCUm9ptujPgXcE757bLI+'
    'JdvrvTJaQT2OHsK+MmyPPdAvc76DGl++bBOJvUa2AD4mYYm74FyfPjO5kr4ayeC8JyAkPePdFj1m7+A9QxJTPgFqVT7CrvU9'
    'mVaUPn+nGL6BzeK9DJoFPmeM1T0S/sK9v/0XvnfBZj3Si5+9qeOkvEgh9jz5KJi+aFa5PMMi1z4aL8w+la7hvOVixb3ishc+'
    'OuNGPn0w6z0IrMw+wQc/vrpzyb5Y2Lq9Vp6SvauAWD733b89A0AfPu05ar2UIK++SkTnPO/Edr6DxvC9bGdmvpBrOL5PLAK8'
    'wMw7vpTpBjwWNZ89BbkDPkbpYT4YQoq+iCz+veY/V72XRdy9rB0UPgq4Aj1A06W+1u+tvVt23T3EhFW99YaBPVNfpr6uXx+8'
    'gv57PPI+xT2me7i8a5eAPXm+h73GlRO8E9u0PgLsuz1Tmj6+pThXvgRhNb6Ay2k+KsXnvjBg6L1ou+69X1rbOxeeDz5sdpY9'
    '2fAJvXU3Gr7O7ku+VO43Psm/+bxiDBG9zYhpPdSbMj0wfM27m34MvhgJcz3ZkuQ9W4wpPuUGCbw9oYm9CgOTvd18ojuw+389'
    'I/iFPdaosj2yQDk+f5bKPeziGj5JcTO+JHKIvlgQAz7sfFC+y60TvpUCNT6HWxg+yoYBvgH/Nz73xfM7gD/+Paqugb6Wwro9'
    'b3XQvDEvMz6u9eq9sF0nPpdPdL1K41Q+twNpPXGPELwDSJY+NZMCPTDLIr57+M+8BlgFPiMEsT0iO2I9WEcKvvmxxD2bSIG+'
    'Mc9HvPRyGD6qFXI96Ak1PPeosz166R49NaCEPl8Dlz3Y4aI+USz2vUH/0L3TntI9EqbwvuGZmb23ztu80RBcvfQsjz6/m6i+'
    'q/g/Pj9Bej4/6uE+qqyOvZlyvb2hWtu79oYXPjiU6DuB46Q9mF/Quh3HMT5AVVI8/LwjPfSj370AKY4+3qeqPKVpmL2OnSw+'
    'UrqIviATNT6j1p4+7kUNPQmLlj7xioW90okLPnPHMD7SJkS8m8gdvWLOz7xcn9g9tdziPf0HxD35oJy8X9E5PoN4Fj6nmzI+'
    '8SnhvWi84z2rUFQ9bHsLvgGdfb2hnrY91UY/vuR8gTz2m7g9OkxqvbbHwD14sqe97KJTvVj/ZDudynA+0njpvSsYxT7nP7++'
    'VEOyvQIf1j0bFoa9dr+uPaeOSj7S72A+idB1PlvNI74YVki+may2Pd9ewT1AAaE93bOlPU7Agj21PLG8qoc0OyNzcb4fjxO+'
    '3Rwxvuf3Or5JOyC7NRtvvvb2dj7Ta5K+HA8JPSLlnr6hQlC+mDrVvdhDbj4HUyi8lwUdvXIIJD7OOh0+zibtPal/Sz7XIdO9'
    'lAmwvhK0Cbw7YJW96m6PPF/Mhr68RZI98EI7PMu6Xz7I/su+V5CrPRn2G74AKyW+cN6IvSd2CT29g8I97VILPqdODD6tjWK+'
    'HTipPh0uHr6y+b49zC4lPpF7Br1JduM9u35AvR07ob0agT0+KebxPdEIAT2yH7E9jgIovWQTdr5m52q8mQDBPUDxNz6+JE29'
    'nvUTvkp+sL0bj9Q64rgwPsTilL0MLRU9Rma5PJHxkb5zftE+stbsvc8oV75q03o+OoYCPkfRET1z0YY+awySPm5wGT6HV1O8'
    'Iok5PMepar42+SU94MtiPePUo70Wxw2870uMvXpbJjzmxaO96jINPpYUS748ex4+3ai3vaQyE72OYqQ8QjnWvXFWAz1a90Q9'
    'yVE2PtJDjzw9Owk++1++PqGSF7+MHyi+9A0KvTFsXj2RVMk9rI/NvVN19r0QB0i8Pz82PB3WJr7TM409cFByPoWpjD5Lrsc8'
    '1FShPS/wGj26oSq9lf8suYfQbj3bSNQ9wGhlvkcCrL5L5Rm8xFYAvreHGj91+RO80YCDvIjKYj1dL8m+/gsHvuyEC7x8nWY9'
    '/Sd4PrijW72gmvy9I4K9PcgogL5IvG27jjS+Pr1ZAr0HPGM+wlubvpdFGD0obEw9KJxWvuBddL2hgA2+mnqnPk3Z3j2AnSo+'
    'nRqSvhSbpz698qU946I8PO3xlb3yh4y99MqwvaweTb2coK+9QJ6vPfQbiT1QwSS8hLcLPTXhxLwsI6O+kBabvfeB7j3JPTu9'
    'BMQNvjNBqbxtz+Y9ipuAPaoybLyFovo9N9OlPulPCz6qkMA9W4M4vQcLSb7f2d68ZzEnvTdZtL2QsvA9iyF0Pf/BtzzcSvG8'
    'uL/GPVlXXT3ccJe+XvhbPsSD5z0OrIA++NGTvqWfNT2iD6O9mu7dvRU4jT4yXtI96+xBvjoHzL0kFYo+QOgiPF1Z0b2Jtba+'
    'K2cvvgEChT73RAc+eKZSvupioz0yQd+8OdviOyplqT1a+b49sIIcPpTPGb4KxBc+fnwGPk9uGb7Thxa+C3WvPRgkQb7hCUW+'
    'LHmWPYhxMD7RzQe+O1TKPbEnOr2ptUg+TYqPvk3q0L0hxyq9FiiqvYFZAD63b2Y9zzwbvSRifbsOe4E8AQphvYy84rwhP9a9'
    '0vWfPQfjp70kE0q+mI/JvlgZIT5Jaca9HC7uPIx147wXLYW+jIo5PQLTab3bOpI+cxKFvqED1r1UXEo9dRaHPTj+dTxz95Y9'
    'u8maPuTQNr58RuY9PY+rvKbvsDxifPS8jUjoPSPQXTwe6Ai+0bUZvt/8Ez0N7pi8KeRIPUWpEL7Lxdg9AeMWOm4gWD4rbpU9'
    'MO5HPh6ztrvY/BM9QAM4vh/GiD3k1MI9Ak83vQ9RIz7tNcE81xEJvmztRzzTUl89PjtGPc8zlT7LoUq8tF6CvbMrxj3JBSm9'
    'sNlEPtsqCD13QHM+2HZMPNyue74en4Y82Qi7PZsMxr0xSCG90DbhPRNqRD0DGnU9PdpjPM1LND4HnAW+BvDePe/7ND0viVy9'
    '3utZvlBLAwQtAAAAAAAAACEA7Jezkf//////////CAAUAGFyZzIubnB5AQAQAIAIAAAAAAAAgAgAAAAAAACTTlVNUFkBAHYA'
    'eydkZXNjcic6ICc8ZjQnLCAnZm9ydHJhbl9vcmRlcic6IEZhbHNlLCAnc2hhcGUnOiAoMSwgOCwgNjQpLCB9ICAgICAgICAg'
    'ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgCv4TEr+4r0A/ituYvtWt97+ZGuO+W8mVP7/V'
    '7D8syJS9YaA5P2+sMz7RoQRA77+ovGfBvj0+4R4+I3wnQOY7yT5RTUe/gbUOP3ARBz8KNS69/xYkwGYUmL+mgwg/jZylP8Di'
    'SL87U16+o+iqvvIlNz8kO1K/VMyNv3OD17+ENji+hXRYPoDQDr/fT8y+0munP1+ktj6FZjm/sE4CP9eG2D6HrCi+v1u3P2Me'
    'nr9m2aq+jfViP/qlLr4XMja/3xzuvSpwLT//B6e+srp5vxFUcT3pnfy/xg9gvfPrOr4rMM4+SwWaPwH/GMBqwSQ/STOiP3xj'
    'jD4sYMs8ZwxDv9E4Tz9lRMw/u//yP3Sld7/IA+8/P89Ev3U4CT6JvRO/PHYAPzI4nj6Cufy+MjHWPtfrbL86A98+ohQMwBcP'
    'sr9kiKa+VbKov73p5D7frRi/8e8HPtvKxT5hG6y+UHoRvhHb/D7/76E7sDMyQBnp6j3bYBpA7VTZP3VFuz4xAKk/rilqvxI6'
    'v7+ghMI/6tQ3v6ZnWD8nFVm/PliuvmjoQDt5CIm/W9wDv6c5kT43wPq/PlwMv9i9Fb7tvrk/xkq6vsOWn784mf07b47YPp0E'
    'sToiNPW+vwdTPmx+MD/Fr/C9ZmKVv4LbkL8w/Pq98WSQPr+OXT8E272+JiW4vmD13D6q78W+kMC1PfdKRL8Mgqy/ZcJYv5+U'
    'Jz8i2K4/0fAev0JdMb+uF+q/wG8Fv4f0kb+0L5s8yJ3WPwBnMMDsy8g9c0aPvthywL3qB8A+0qwvvrmuBD+W+Va+Qo1Kvy2G'
    'P74wV08+gG3PvvNzgj+s+Ui/LtfVP+V6f7/zPmQ9DlmAPyxNML8eRka/Tm/+vmQzt7+e6d2+XBp4v6OdOjyXWTpA8qLePy+Z'
    'ZL5VURu+NMZZP9fJ8j3MLVk9F6rJPaJ9uT2hkWY/Fvv7vfmfDj8Gy5M9VEv7v5C70z+42D4+rEdIP5e0vz87RCE+14PzvpB6'
    'xz9kALw/fKOCv51Vwb5ei5I+8hYuvlPxzr5LdX0+ZmxDvlg1uz/XA62+AsquvhU5IT/2Wq6/klenvzJE2L4Oof++n/8GwIjK'
    'jT6F/Xk/8JcKPwo7Pb+eibc/wmmWv1VQpr91XO0+JQVKvtzrO7+6FO++PdOvPq0sAL/mNis/aknwP53ZtT8qbFA/CtDgvnA+'
    'uj9nWj8/p+HbPp87RD/uuaY/LnRMPkJczb9ulq2//m+mv3OAor3nUoo/BJrSv3yc5j+4lQy/m+KEP3m1CT9dOV2/znBGvuUa'
    'PL6eK1I9AI3Dv8bqmL3XjYI+N2urP9UxMT/G4Qu/ZUDNPrfj4T9/EJK/yViov0CWur2thIi/RWXSP5zSGL+YlLG+FNYsvrT/'
    'VT/QQlK+r3YzP3pmy799n2A/4JqEv0zalb5nazU+tfSqPx5uAbsYSAm+eUAZP2ASiD/9tpW/Nyg3P0E9ur0Geno7NLFlv/GV'
    'XT6HbKU/vtnAP5OInj8ca7a9Z9UnPwsaGj+/isO/4SSLv6st+D54QZs/0HPavnYn4L9yYY2+MK5GvxcLoD62D9+/1GpsP8pj'
    'AUAH6+8/87k0P2T/gL5ivqc9cHL5v3C4nr8ye3i+zghVv8PC1z85Aq2+KTsxwGNDI77SuZK/1KM5P16cHzt5tPo+TyebPmWr'
    'yr+UlVI/WZkmP+q+G7/vcA4/PuZxvG3OzL6WK/E+2cHRPcmJNT7tqS4/JwC6Pxl9ZT/VpxG/9R9RPxquwb2AaaK9ZpZJPz/h'
    'Iz87cd++gCObPz7ULT5NboW/BBejPy61oL/gPX2//jHYvy/Ttr3sgIS/3brdPpGxSz+Jt1K/4N29Pyyt+D4azZY/pnkFP3MH'
    '3z5MaLu/hENDP3m9lb46PmM+Ykd+v8EmKsA4leK+NWjiP2dmYL+mOfA/YTJXv/8YDj5mcgLANa9rv2ADWz8V86m+0ZzpPtOd'
    'rD/dQca934YPv31rfL8XpXW/FoquPdQ/g7001de/JRXTvjCHNj/uFe4+oPkxPqlppz8E2e+9aTKhP3rTAr++zYo/3oTavxfU'
    'ID8wFJK/M/b0PvUkFL4TGZQ+GOkMQC2Bbz7VruO+KxYCP5NjPr8WacQ/xnUxP4Qrz786hEq+nApaP8UGZ78npKi/5oCSPyLz'
    'eb98gBk+A+9APTDvgb/9hou9gfOjv5UylL/sag8+BR44P3VLSL/FIQs/Sf3mPqNVBUDqkFs+DGDHvtof4T0TL4+/f3jWPhU4'
    'lD8+WQS/oF97POxvnb5vP7C+wUhqv/zcpD/x0rs/aDa/PnZMxD4cQqG/CcCFvuxIb7/qNim9BPzrP8YnJD8xchLAnfXfv1fp'
    'B8BLPBc/6AqFvhFqkTtB9PQ+VtfTP6exCD+jklA/F0tMP523l799O3e+mLlePI+x+b5lvl+/zKteP3rSpj/ZNxm/uWEXv30N'
    'u79Jmk8/mckMwPSzvT8Pddg/ikfKv64VhL6eUnm/1PAhQLLzUj5IpRI/2sa+vjjzhz8lsPS9QhELv8+m47+RaMi+cBeZvy8T'
    'kT/3Pus+LuBuvXIYXz8vrj4+IgtyP8tmKr7Lbz0+nSjyvqJRMz3XFJA/YxRXvlAkkz9zlda/z1RaPuiMrT8Jpxi/6gsAvTht'
    'uj8pA4+/9l+qPza66T7jJpS/wr4OwOW55LxjTog+8cLvPpkGxr6qF6+/SNzNvh5t1j5Tzpa9Mzq3P5qApL9tUN0+3hYbvtWk'
    'Jz8aAkO9UEsBAi0DLQAAAAAAAAAhAEUjbb+AAQAAgAEAAAgAAAAAAAAAAAAAAIABAAAAAGFyZzAubnB5UEsBAi0DLQAAAAAA'
    'AAAhACPoQDSAGAAAgBgAAAgAAAAAAAAAAAAAAIABugEAAGFyZzEubnB5UEsBAi0DLQAAAAAAAAAhAOyXs5GACAAAgAgAAAgA'
    'AAAAAAAAAAAAAIABdBoAAGFyZzIubnB5UEsFBgAAAAADAAMAogAAAC4jAAAAAA=='
)
EXPECTED_NPZ = (
    'UEsDBC0AAAAAAAAAIQACdjda//////////8LABQAcmVzdWx0MC5ucHkBABAAgAgAAAAAAACACAAAAAAAAJNOVU1QWQEAdgB7'
    'J2Rlc2NyJzogJzxmNCcsICdmb3J0cmFuX29yZGVyJzogRmFsc2UsICdzaGFwZSc6ICg4LCA2NCksIH0gICAgICAgICAgICAg'
    'ICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAK/hMSv7ivQD+K25i+1a33v5ka475byZU/v9Xs'
    'PyzIlL1hoDk/b6wzPtGhBEDvv6i8Z8G+PT7hHj4jfCdA5jvJPlFNR7+BtQ4/cBEHPwo1Lr3/FiTAZhSYv6aDCD+NnKU/wOJI'
    'vztTXr6j6Kq+8iU3PyQ7Ur9UzI2/c4PXv4Q2OL6FdFg+gNAOv99PzL7Sa6c/X6S2PoVmOb+wTgI/14bYPoesKL6/W7c/Yx6e'
    'v2bZqr6N9WI/+qUuvhcyNr/fHO69KnAtP/8Hp76yunm/EVRxPemd/L/GD2C98+s6viswzj5LBZo/Af8YwGrBJD9JM6I/fGOM'
    'PixgyzxnDEO/0ThPP2VEzD+7//I/dKV3v8gD7z8/z0S/dTgJPom9E788dgA/MjiePoK5/L4yMdY+1+tsvzoD3z6iFAzAFw+y'
    'v2SIpr5Vsqi/venkPt+tGL/x7wc+28rFPmEbrL5QehG+Edv8Pv/voTuwMzJAGenqPdtgGkDtVNk/dUW7PjEAqT+uKWq/Ejq/'
    'v6CEwj/q1De/pmdYPycVWb8+WK6+aOhAO3kIib9b3AO/pzmRPjfA+r8+XAy/2L0Vvu2+uT/GSrq+w5afvziZ/Ttvjtg+nQSx'
    'OiI09b6/B1M+bH4wP8Wv8L1mYpW/gtuQvzD8+r3xZJA+v45dPwTbvb4mJbi+YPXcPqrvxb6QwLU990pEvwyCrL9lwli/n5Qn'
    'PyLYrj/R8B6/Ql0xv64X6r/AbwW/h/SRv7QvmzzIndY/AGcwwOzLyD1zRo++2HLAveoHwD7SrC++ua4EP5b5Vr5CjUq/LYY/'
    'vjBXTz6Abc++83OCP6z5SL8u19U/5Xp/v/M+ZD0OWYA/LE0wvx5GRr9Ob/6+ZDO3v57p3b5cGni/o506PJdZOkDyot4/L5lk'
    'vlVRG740xlk/18nyPcwtWT0Xqsk9on25PaGRZj8W+/u9+Z8OPwbLkz1US/u/kLvTP7jYPj6sR0g/l7S/PztEIT7Xg/O+kHrH'
    'P2QAvD98o4K/nVXBvl6Lkj7yFi6+U/HOvkt1fT5mbEO+WDW7P9cDrb4Cyq6+FTkhP/Zarr+SV6e/MkTYvg6h/76f/wbAiMqN'
    'PoX9eT/wlwo/Cjs9v56Jtz/CaZa/VVCmv3Vc7T4lBUq+3Os7v7oU7749068+rSwAv+Y2Kz9qSfA/ndm1PypsUD8K0OC+cD66'
    'P2daPz+n4ds+nztEP+65pj8udEw+QlzNv26Wrb/+b6a/c4CivedSij8EmtK/fJzmP7iVDL+b4oQ/ebUJP105Xb/OcEa+5Ro8'
    'vp4rUj0AjcO/xuqYvdeNgj43a6s/1TExP8bhC79lQM0+t+PhP38Qkr/JWKi/QJa6va2EiL9FZdI/nNIYv5iUsb4U1iy+tP9V'
    'P9BCUr6vdjM/embLv32fYD/gmoS/TNqVvmdrNT619Ko/Hm4BuxhICb55QBk/YBKIP/22lb83KDc/QT26vQZ6ejs0sWW/8ZVd'
    'PodspT++2cA/k4iePxxrtr1n1Sc/CxoaP7+Kw7/hJIu/qy34PnhBmz/Qc9q+difgv3Jhjb4wrka/FwugPrYP37/Uamw/ymMB'
    'QAfr7z/zuTQ/ZP+AvmK+pz1wcvm/cLievzJ7eL7OCFW/w8LXPzkCrb4pOzHAY0MjvtK5kr/Uozk/XpwfO3m0+j5PJ5s+ZavK'
    'v5SVUj9ZmSY/6r4bv+9wDj8+5nG8bc7MvpYr8T7ZwdE9yYk1Pu2pLj8nALo/GX1lP9WnEb/1H1E/Gq7BvYBpor1mlkk/P+Ej'
    'Pztx376AI5s/PtQtPk1uhb8EF6M/LrWgv+A9fb/+Mdi/L9O2veyAhL/dut0+kbFLP4m3Ur/g3b0/LK34PhrNlj+meQU/cwff'
    'Pkxou7+EQ0M/eb2Vvjo+Yz5iR36/wSYqwDiV4r41aOI/Z2Zgv6Y58D9hMle//xgOPmZyAsA1r2u/YANbPxXzqb7RnOk+052s'
    'P91Bxr3fhg+/fWt8vxeldb8Wiq491D+DvTTV178lFdO+MIc2P+4V7j6g+TE+qWmnPwTZ771pMqE/etMCv77Nij/ehNq/F9Qg'
    'PzAUkr8z9vQ+9SQUvhMZlD4Y6QxALYFvPtWu474rFgI/k2M+vxZpxD/GdTE/hCvPvzqESr6cClo/xQZnvyekqL/mgJI/IvN5'
    'v3yAGT4D70A9MO+Bv/2Gi72B86O/lTKUv+xqDz4FHjg/dUtIv8UhCz9J/eY+o1UFQOqQWz4MYMe+2h/hPRMvj79/eNY+FTiU'
    'Pz5ZBL+gX3s87G+dvm8/sL7BSGq//NykP/HSuz9oNr8+dkzEPhxCob8JwIW+7Ehvv+o2Kb0E/Os/xickPzFyEsCd9d+/V+kH'
    'wEs8Fz/oCoW+EWqRO0H09D5W19M/p7EIP6OSUD8XS0w/nbeXv307d76YuV48j7H5vmW+X7/Mq14/etKmP9k3Gb+5YRe/fQ27'
    'v0maTz+ZyQzA9LO9Pw912D+KR8q/rhWEvp5Seb/U8CFAsvNSPkilEj/axr6+OPOHPyWw9L1CEQu/z6bjv5FoyL5wF5m/LxOR'
    'P/c+6z4u4G69chhfPy+uPj4iC3I/y2YqvstvPT6dKPK+olEzPdcUkD9jFFe+UCSTP3OV1r/PVFo+6IytPwmnGL/qCwC9OG26'
    'PykDj7/2X6o/NrrpPuMmlL/Cvg7A5bnkvGNOiD7xwu8+mQbGvqoXr79I3M2+Hm3WPlPOlr0zOrc/moCkv21Q3T7eFhu+1aQn'
    'PxoCQ71QSwECLQMtAAAAAAAAACEAAnY3WoAIAACACAAACwAAAAAAAAAAAAAAgAEAAAAAcmVzdWx0MC5ucHlQSwUGAAAAAAEA'
    'AQA5AAAAvQgAAAAA'
)

# (rtol, atol) by dtype; any other dtype must match exactly.
TOLERANCES = {"float16": (1e-2, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9),
              "complex64": (1e-4, 1e-5), "complex128": (1e-7, 1e-9)}

# The child's exit statuses.
CHILD_OK, CHILD_NO_BINDINGS, CHILD_LOWERING_FAILED, CHILD_EXECUTION_FAILED = 0, 20, 21, 22


def say(text):
    print("repro.py: " + text, flush=True)


def load_npz(b64):
    import numpy as np

    with np.load(io.BytesIO(base64.b64decode(b64))) as npz:
        return [npz[name] for name in sorted(npz.files, key=lambda n: int(n.removeprefix("arg").removeprefix("result")))]


# --- the child: parse, lower, run ---------------------------------------------------------

CONSUME_PREFIX = "refbackend_consume_func_return"
CIFACE_PREFIX = "_mlir_ciface_"
TOKEN_DTYPES = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
                "f16": "float16", "f32": "float32", "f64": "float64", "c32": "complex64",
                "c64": "complex128"}


class UnrankedMemRef(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int64), ("descriptor", ctypes.c_void_p)]


def descriptors(arrays, keep):
    """Pointers to unranked memref descriptors of the arrays (refback-munge-calling-conventions'
    convention); ``keep`` holds everything they point into."""
    pointers = []
    for array in arrays:
        rank, address = array.ndim, array.ctypes.data
        strides = [s // array.itemsize for s in array.strides] if array.size else [0] * rank
        ranked = (ctypes.c_int64 * (3 + 2 * rank))(address, address, 0, *array.shape, *strides)
        unranked = UnrankedMemRef(rank, ctypes.addressof(ranked))
        pointer = ctypes.pointer(unranked)
        keep += [array, ranked, unranked, pointer]
        pointers.append(ctypes.pointer(pointer))
    return pointers


def read_memref(unranked, dtype):
    import numpy as np

    rank = unranked.rank
    header = (ctypes.c_int64 * (3 + 2 * rank)).from_address(unranked.descriptor)
    aligned, offset = header[1] & 0xFFFFFFFFFFFFFFFF, header[2]
    shape, strides = tuple(header[3:3 + rank]), tuple(header[3 + rank:3 + 2 * rank])
    if 0 in shape:
        return np.empty(shape, dtype)
    low = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s < 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides, strict=True) if s > 0)
    span = high - low + 1
    raw = (ctypes.c_char * (span * dtype.itemsize)).from_address(aligned + (offset + low) * dtype.itemsize)
    flat = np.frombuffer(raw, dtype=dtype, count=span)
    view = np.lib.stride_tricks.as_strided(flat[-low:], shape, [s * dtype.itemsize for s in strides])
    return np.array(view, copy=True)


def consume_tokens(name):
    rest = name[len(CONSUME_PREFIX):]
    return [(raw.startswith("mr"), TOKEN_DTYPES[raw[2:] if raw.startswith("mr") else raw])
            for raw in filter(None, rest.split("_"))]


def lower(module):
    """Runs TO_LINALG ("compile-failure": that alone), then TO_LLVM, on the module; a child exit status."""
    from torch_mlir import ir, passmanager

    if KIND == "compile-failure":
        try:
            passmanager.PassManager.parse(TO_LINALG).run(module.operation)
        except ir.MLIRError as e:
            print(str(e), flush=True)
            return CHILD_LOWERING_FAILED
        return CHILD_OK
    for name, pipeline in (("to linalg", TO_LINALG), ("to LLVM", TO_LLVM)):
        try:
            passmanager.PassManager.parse(pipeline).run(module.operation)
        except ir.MLIRError as e:
            print(f"the lowering {name} fails: {e}", flush=True)
            return CHILD_LOWERING_FAILED
    return CHILD_OK


def child(out_path):
    try:
        import numpy as np
        from torch_mlir import ir
        from torch_mlir.dialects import torch as torch_dialect
        from torch_mlir.execution_engine import ExecutionEngine
    except ImportError as e:
        print(f"cannot import the torch-mlir bindings or numpy: {e}", flush=True)
        return CHILD_NO_BINDINGS
    context = ir.Context()
    torch_dialect.register_dialect(context)
    with context:
        try:
            module = ir.Module.parse(IR)
        except ir.MLIRError as e:
            print(f"the IR does not parse: {e}", flush=True)
            return CHILD_LOWERING_FAILED
        status = lower(module)
        if status != CHILD_OK or KIND == "compile-failure":
            return status
        names = [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations
                 if op.operation.name == "llvm.func" and "sym_name" in op.attributes]
        try:
            engine = ExecutionEngine(module, opt_level=0)
        except (RuntimeError, ValueError) as e:
            print(f"the ExecutionEngine cannot load the module: {e}", flush=True)
            return CHILD_EXECUTION_FAILED
    results, callbacks = [], []
    for name in names:
        if not name.startswith(CONSUME_PREFIX):
            continue
        tokens = consume_tokens(name)
        argtypes = [ctypes.POINTER(UnrankedMemRef) if memref else ctypes.c_uint16 if dtype == "float16"
                    else np.ctypeslib.as_ctypes_type(np.dtype(dtype)) for memref, dtype in tokens]

        def consume(*args, tokens=tokens):
            results.append([read_memref(a.contents, np.dtype(d)) if memref else
                            np.array(a, np.uint16).view(np.float16) if d == "float16" else np.array(a, d)
                            for a, (memref, d) in zip(args, tokens, strict=True)])

        callback = ctypes.CFUNCTYPE(None, *argtypes)(consume)
        callbacks.append(callback)
        engine.register_runtime(name, callback)
    keep = []
    arguments = descriptors([np.ascontiguousarray(a) for a in load_npz(INPUTS_NPZ)], keep)
    try:
        engine.invoke(FUNCTION, *arguments)
    except (RuntimeError, ValueError) as e:
        print(f"the ExecutionEngine cannot run @{FUNCTION}: {e}", flush=True)
        return CHILD_EXECUTION_FAILED
    if len(results) != 1:
        print(f"@{FUNCTION} returned {len(results)} times, expected once", flush=True)
        return CHILD_EXECUTION_FAILED
    np.savez(out_path, **{f"result{i}": r for i, r in enumerate(results[0])})
    return CHILD_OK


# --- the parent: run the child, judge what it did ---------------------------------------------

def compare(actual, expected):
    """(wrong, text): whether any output differs beyond TOLERANCES, and the worst difference."""
    import numpy as np

    if len(actual) != len(expected):
        return True, f"{len(actual)} results, expected {len(expected)}"
    worst, wrong = 0.0, []
    for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
        if a.shape != e.shape:
            wrong.append(f"result{i} has shape {list(a.shape)}, expected {list(e.shape)}")
            continue
        rtol, atol = TOLERANCES.get(str(e.dtype), (0.0, 0.0))
        a64 = a.astype(np.complex128 if np.iscomplexobj(e) else np.float64)
        e64 = e.astype(a64.dtype)
        close = np.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
        with np.errstate(invalid="ignore"):
            diff = np.where(close, 0.0, np.abs(a64 - e64))
        worst = max(worst, float(np.nanmax(diff)) if diff.size else 0.0)
        if not close.all():
            wrong.append(f"result{i}: {int((~close).sum())} of {close.size} values differ "
                         f"(max abs diff {float(np.nanmax(diff)):.3g}, rtol {rtol:g}, atol {atol:g})")
    return bool(wrong), "; ".join(wrong) or f"all results within tolerance (max abs diff {worst:.3g})"


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        return child(sys.argv[2])
    with tempfile.TemporaryDirectory(prefix="repro-") as tmp:
        out = os.path.join(tmp, "outputs.npz")
        cmd = [sys.executable, os.path.abspath(__file__), "--child", out]
        try:
            done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False,
                                  timeout=TIMEOUT_S, text=True, errors="replace")
        except subprocess.TimeoutExpired:
            say(f"CANNOT TELL: the run did not finish within {TIMEOUT_S} s")
            return CANNOT_RUN
        printed = done.stdout.strip()
        if printed:
            print(printed)
        return judge(done.returncode, printed, out)


def judge(status, printed, out):
    """The verdict (REPRODUCED, NOT_REPRODUCED or CANNOT_RUN) on the child's exit status, what it
    printed and the outputs it saved at ``out``."""
    if status == CHILD_NO_BINDINGS:
        say(f"CANNOT RUN: {sys.executable} lacks torch-mlir's bindings or numpy; "
            "run it with a Python that has torch-mlir 20261001 installed")
        return CANNOT_RUN
    if status < 0 or status == CHILD_EXECUTION_FAILED:
        return judge_death(status, printed)
    if KIND == "compile-failure":
        if status == CHILD_LOWERING_FAILED and EXPECTED_ERROR in printed:
            say(f"REPRODUCED: the pipeline fails with: {EXPECTED_ERROR}")
            return REPRODUCED
        say(f"NOT REPRODUCED: the output lacks: {EXPECTED_ERROR} (child exit status {status})")
        return NOT_REPRODUCED
    if status == CHILD_LOWERING_FAILED:
        say("NOT REPRODUCED: the lowering fails, which is not this bug")
        return NOT_REPRODUCED
    if status != CHILD_OK:
        say(f"NOT REPRODUCED: the child exited with status {status}")
        return NOT_REPRODUCED
    return judge_values(out)


def judge_death(status, printed):
    """The child died (a signal, or the ExecutionEngine failed): the bug for "miscompile" and
    "runtime-failure", not the expected error for "compile-failure"."""
    how = (f"by {signal.Signals(-status).name}" if status < 0 and -status in
           signal.valid_signals() else "with an error")
    if KIND == "compile-failure":
        say(f"NOT REPRODUCED: the pass pipeline dies {how}, not with the expected error")
        return NOT_REPRODUCED
    last = [line.strip() for line in printed.splitlines() if line.strip()]
    say(f"REPRODUCED: the run dies {how}" + (f": {last[-1]}" if last else ""))
    return REPRODUCED


def judge_values(out):
    """The child ran to the end: compare its outputs with eager PyTorch's."""
    import numpy as np

    with np.load(out) as npz:
        actual = [npz[f"result{i}"] for i in range(len(npz.files))]
    wrong, text = compare(actual, load_npz(EXPECTED_NPZ))
    if KIND == "runtime-failure":
        say(f"NOT REPRODUCED: the code runs to the end ({text})")
        return NOT_REPRODUCED
    if wrong:
        say(f"REPRODUCED: wrong numbers: {text}")
        return REPRODUCED
    say(f"NOT REPRODUCED: {text}")
    return NOT_REPRODUCED


if __name__ == "__main__":
    sys.exit(main())
