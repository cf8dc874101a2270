"""Quantized values in the object graph: per-tensor affine tensors and the packed weights of
quantized Linear layers, in the forms upstream's importer gave them."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn

from harness.frontends.torchscript import ModuleBuilder


def imported(model: nn.Module) -> str:
    mb = ModuleBuilder()
    mb.import_module(torch.jit.script(model)._c)
    mb.verify()
    return str(mb.module)


def quantize(t: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.quantize_per_tensor(t, 0.5, 2, dtype)


class QuantizedBuffers(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("qs", quantize(torch.tensor([1.0, 2.0, 3.0]), torch.qint8))
        self.register_buffer("qu", quantize(torch.tensor([4.0, 5.0]), torch.quint8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def test_quantized_tensor_is_its_integer_literal_with_scale_and_zero_point(filecheck):
    # The CHECK lines below match one op a line as torch-mlir prints it, so they stay long (noqa:
    # E501 where the string closes).
    filecheck(imported(QuantizedBuffers()), """
        CHECK:      %[[QS_DATA:.*]] = torch.tensor.literal(dense<[4, 6, 8]> : tensor<3xsi8>) : !torch.tensor<[3],si8>
        CHECK-NEXT: %[[SCALE:.*]] = torch.constant.float 5.000000e-01
        CHECK-NEXT: %[[ZERO:.*]] = torch.constant.int 2
        CHECK-NEXT: %[[QS:.*]] = torch.per_tensor_affine.create %[[QS_DATA]], %[[SCALE]], %[[ZERO]] : !torch.tensor<[3],si8>, !torch.float, !torch.int -> !torch.tensor<[3],!torch.qint8>
        CHECK-NEXT: %[[QU_DATA:.*]] = torch.tensor.literal(dense<[10, 12]> : tensor<2xui8>) : !torch.tensor<[2],ui8>
        CHECK-NEXT: %[[QU:.*]] = torch.per_tensor_affine.create %[[QU_DATA]], %[[SCALE]], %[[ZERO]] : {{.*}} -> !torch.tensor<[2],!torch.quint8>
        CHECK:      torch.slot "qs", %[[QS]] : !torch.tensor<[3],!torch.qint8>
        CHECK-NEXT: torch.slot "qu", %[[QU]] : !torch.tensor<[2],!torch.quint8>
    """)  # noqa: E501


class QuantizedLinears(nn.Module):
    def __init__(self):
        super().__init__()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.with_bias = torch.ao.nn.quantized.Linear(3, 2, dtype=torch.qint8)
            self.without_bias = torch.ao.nn.quantized.Linear(4, 2, bias_=False, dtype=torch.qint8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.without_bias(self.with_bias(x))


def test_packed_linear_weights_are_linear_params_of_their_unpacked_tensors(filecheck):
    # Each layer's LinearPackedParamsBase holds its own weight: two different literals, even
    # though the unpacked tensors are temporaries that may reuse one address.
    filecheck(imported(QuantizedLinears()), """
        CHECK:     torch.attr "_packed_params" : !torch.LinearParams
        CHECK:     %[[W1:.*]] = torch.per_tensor_affine.create {{.*}} -> !torch.tensor<[2,3],!torch.qint8>
        CHECK:     %[[B1:.*]] = torch.tensor.literal({{.*}}) : !torch.tensor<[2],f32>
        CHECK:     %[[P1:.*]] = torch.linear_params.create %[[W1]], %[[B1]] : !torch.tensor<[2,3],!torch.qint8>, !torch.tensor<[2],f32>
        CHECK:     torch.slot "_packed_params", %[[P1]] : !torch.LinearParams
        CHECK:     %[[W2:.*]] = torch.per_tensor_affine.create {{.*}} -> !torch.tensor<[2,4],!torch.qint8>
        CHECK:     %[[P2:.*]] = torch.linear_params.create %[[W2]] : !torch.tensor<[2,4],!torch.qint8>
        CHECK:     torch.slot "_packed_params", %[[P2]] : !torch.LinearParams
    """)  # noqa: E501


def test_per_channel_quantized_tensor_is_refused():
    from harness.errors import UnsupportedTypeError

    class PerChannel(nn.Module):
        def __init__(self):
            super().__init__()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.register_buffer("q", torch.quantize_per_channel(
                    torch.ones(2, 3), torch.tensor([0.1, 0.2]), torch.tensor([0, 0]), 0, torch.qint8))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x

    with pytest.raises(UnsupportedTypeError, match="per_channel_affine"):
        imported(PerChannel())
