"""Writes the raw TorchScript IR of ResNet18's tail, imported by the project's importer, with its
debug locations (the Python line of each op): torch.mm(torch.flatten(F.adaptive_avg_pool2d(x,
(1, 1)), 1), w), x 1x8x7x7, w 8x3."""

import sys

import torch
import torch.nn.functional as F

from harness import torchscript


class PoolFlattenMm(torch.nn.Module):
    def forward(self, x, w):
        return torch.mm(torch.flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1), w)  # the tail


module = torchscript.compile(PoolFlattenMm(), (torch.zeros(1, 8, 7, 7), torch.zeros(8, 3)),
                             output_type="raw", use_tracing=True)
module.operation.print(file=sys.stdout, enable_debug_info=True)
