#!/usr/bin/env python3
"""The ResNet18 case of docs/numerics.md, as a file: Hugging Face's ResNet-18 architecture (basic blocks,
depths 2-2-2-2; random weights from the Config class) traced and imported by the project's
TorchScript importer, weights kept, debug locations on, and its input.

    python tools/resnet18_case.py -o DIR                 # widths 64..512, as upstream's e2e ResNet18
    python tools/resnet18_case.py -o DIR --tiny          # widths 8..64: the same ops, faster
    python tools/resnet18_case.py -o DIR --size 224      # upstream's image size (default 64)

Writes DIR/resnet18.mlir (raw TorchScript IR: the object graph) and DIR/inputs.npz (one image,
seed 0). With aten.adaptive_avg_pool2d kept backend-legal, as upstream's TorchScript e2e config
kept it, its numbers come out wrong on the RefBackend:

    harness check DIR/resnet18.mlir --inputs DIR/inputs.npz --pipeline "$LEGAL_POOL"

where LEGAL_POOL is ``LEGAL_POOL`` below. torchvision is not installed here; Hugging Face's
ResNetForImageClassification is the same network (a 7x7 stem, max pool, four stages of two
basic blocks, average pool, flatten, linear).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LEGAL_POOL = ("builtin.module(torchscript-module-to-torch-backend-pipeline{backend-legal-ops="
              "aten.adaptive_avg_pool2d},torch-backend-to-linalg-on-tensors-backend-pipeline)")
WIDTHS = {"full": ([64, 128, 256, 512], 64), "tiny": ([8, 16, 32, 64], 8)}


def build(tiny: bool = False):
    import torch
    import transformers

    hidden, embedding = WIDTHS["tiny" if tiny else "full"]
    config = transformers.ResNetConfig(layer_type="basic", depths=[2, 2, 2, 2], hidden_sizes=hidden,
                                       embedding_size=embedding)
    torch.manual_seed(0)
    model = transformers.ResNetForImageClassification(config).eval()

    class Logits(torch.nn.Module):
        """The logits alone: one tensor to trace."""

        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, pixels):
            return self.inner(pixels).logits

    return Logits(model).eval()


def write(out_dir: Path, *, tiny: bool = False, size: int = 64) -> tuple[Path, Path]:
    import numpy as np
    import torch

    from harness.compiler.mlir import WriteOptions, write_module
    from harness.frontends.compat import import_torchscript

    model = build(tiny)
    pixels = torch.randn(1, 3, size, size, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        builder = import_torchscript(model, (pixels,), use_tracing=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    ir_path = write_module(builder.module, out_dir / "resnet18.mlir", WriteOptions(keep_weights=True))
    inputs = out_dir / "inputs.npz"
    np.savez(inputs, pixels.numpy())
    return Path(ir_path), inputs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", required=True, help="folder to write resnet18.mlir and inputs.npz")
    parser.add_argument("--tiny", action="store_true", help="widths 8..64 instead of 64..512")
    parser.add_argument("--size", type=int, default=64, help="image height and width (default 64)")
    args = parser.parse_args()
    ir_path, inputs = write(Path(args.out), tiny=args.tiny, size=args.size)
    print(f"{ir_path}\n{inputs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
