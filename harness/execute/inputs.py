"""Inputs for a function: random ones from its signature, or arrays from an .npz file.

Random inputs are reproducible (numpy's PCG64 from a seed): floats standard normal, integers
uniform in ``[int_low, int_high)`` (small by default, so that ids index any embedding and a
0/1-style mask stays in range), bools fair coins. A dynamic dimension gets ``dynamic_size``.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

import numpy as np

from harness.compiler.irfile import write_atomically
from harness.errors import InputFileError, InputsError

from .dtypes import DType, TensorSignature


@dataclass(frozen=True)
class RandomInputs:
    seed: int = 0
    int_low: int = 0        # integers are drawn from [int_low, int_high)
    int_high: int = 2
    dynamic_size: int = 4   # the size of a dynamic (?) dimension

    def describe(self) -> str:
        return f"random (seed {self.seed}; integers in [{self.int_low}, {self.int_high}))"


def random_inputs(signature: TensorSignature, options: RandomInputs = RandomInputs()) -> list[np.ndarray]:
    rng = np.random.Generator(np.random.PCG64(options.seed))
    arrays = []
    for spec in signature.args:
        shape = tuple(options.dynamic_size if d is None else d for d in spec.shape)
        if spec.dtype is DType.BOOL:
            arrays.append(rng.integers(0, 2, size=shape).astype(np.bool_))
        elif spec.dtype.is_float:
            arrays.append(rng.standard_normal(size=shape).astype(spec.dtype.numpy))
        elif spec.dtype.is_complex:
            parts = rng.standard_normal(size=(2, *shape))
            arrays.append((parts[0] + 1j * parts[1]).astype(spec.dtype.numpy))
        else:
            info = np.iinfo(spec.dtype.numpy)
            low, high = max(options.int_low, info.min), min(options.int_high, info.max + 1)
            arrays.append(rng.integers(low, high, size=shape).astype(spec.dtype.numpy))
    return arrays


def load_npz(path: str | os.PathLike, signature: TensorSignature) -> list[np.ndarray]:
    """The arrays of an .npz file for ``signature``'s arguments: named ``arg0``, ``arg1``, ... or,
    without those names, in the file's order (``np.savez(FILE, a, b)`` writes ``arr_0``, ``arr_1``)."""
    path = Path(path)
    source = str(path)
    described = ", ".join(a.describe() for a in signature.args)
    if not path.is_file():
        raise InputFileError(f"inputs file {path} does not exist. Write one with np.savez, or use "
                             "--random-inputs.")
    try:
        with np.load(path, allow_pickle=False) as npz:
            names = list(npz.files)
            arg_names = [f"arg{i}" for i in range(len(signature.args))]
            order = arg_names if set(arg_names) <= set(names) else names
            arrays = [np.asarray(npz[n]) for n in order]
    except (OSError, ValueError, zipfile.BadZipFile) as e:
        raise InputsError(source, f"it is not an .npz file numpy can read ({e})", described) from None
    if len(arrays) != len(signature.args):
        raise InputsError(source, f"it holds {len(arrays)} arrays ({', '.join(names)}) for "
                          f"{len(signature.args)} arguments", described)
    for i, (array, spec) in enumerate(zip(arrays, signature.args, strict=False)):
        got = DType.of(array)
        if got is not spec.dtype:
            raise InputsError(source, f"argument {i} is {got.value}, expected {spec.dtype.value}", described)
        if array.ndim != len(spec.shape) or any(
                d is not None and d != n for d, n in zip(spec.shape, array.shape, strict=False)):
            raise InputsError(source, f"argument {i} has shape {list(array.shape)}, expected "
                              f"{spec.describe()}", described)
    return arrays


def save_npz(path: str | os.PathLike, arrays: Sequence[np.ndarray], prefix: str = "arg") -> Path:
    """``arrays`` as ``PREFIX0``, ``PREFIX1``, ... (what ``load_npz`` reads), written atomically.
    Numbers only (``allow_pickle=False``, as ``np.load`` reads them); naming that flag also tells
    the type checker that no ``**`` key stands for it."""
    return write_atomically(path, lambda f: np.savez(f, allow_pickle=False,
                                                     **{f"{prefix}{i}": np.asarray(a)
                                                        for i, a in enumerate(arrays)}), binary=True)
