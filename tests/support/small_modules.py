"""Small modules shared by more than one test file."""

import torch
from torch import nn


class TupleOut(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        y = self.fc(x)
        return y, torch.sigmoid(y)


class UnpacksSubmoduleTuple(nn.Module):
    def __init__(self):
        super().__init__()
        self.pair = TupleOut()

    def forward(self, x):
        a, b = self.pair(x)
        return a * b
