"""The seed catalog: each fix computes what its idiom computes, and each idiom is findable.

The lit tests in lit_tests/seed/ check what torch-mlir does with the idioms; these check the
catalog itself, in eager PyTorch: a "fix" that changed the numbers would not be a fix.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from harness.models import seed
from harness.models.markers import marker_lines


def _first(output):
    return output[0] if isinstance(output, tuple) else output


@pytest.mark.parametrize("name", sorted(seed.IDIOMS))
def test_fix_matches_idiom_in_eager(name):
    idiom = seed.IDIOMS[name]
    torch.manual_seed(0)
    original = idiom.make().eval()
    torch.manual_seed(0)
    fixed = idiom.make_fixed().eval()
    examples = idiom.examples()
    with torch.no_grad():
        want = _first(original(*examples))
        got = _first(fixed(*examples))
    assert got.shape == want.shape and got.dtype == want.dtype
    torch.testing.assert_close(got, want, equal_nan=True)


def test_tuple_of_views_idiom_returns_a_cache_of_views():
    idiom = seed.IDIOMS["tuple-of-views"]
    torch.manual_seed(0)
    _hidden, cache = idiom.make()(*idiom.examples())
    assert len(cache) == 2 and all(len(present) == 2 for present in cache)
    assert cache[0][0].shape == (2, seed.HEADS, seed.SEQ, seed.HEAD_DIM)


def test_every_idiom_has_exactly_one_marker_on_its_code():
    markers = seed.marker_lines()
    # One marker per idiom, on the line its 2022 diagnostic named; mask-to-dtype-device also
    # marks its first `.to`, the `mask.to(dtype)` inside the helper (a line of its own, as in OPT).
    assert sorted(markers) == sorted([*seed.IDIOMS, "mask-to-dtype-device-dtype"])
    lines = Path(seed.__file__).read_text().splitlines()
    expected_code = {
        "arange-traced-size": "torch.arange(",
        "full-tensor-fill": "torch.tensor(float(",
        "mask-to-dtype-device": ".to(x.device)",
        "mask-to-dtype-device-dtype": "mask.to(dtype)",
        "mask-to-bool": ".to(torch.bool)",
        "view-traced-sizes": ".view(",
        "tuple-of-views": ".contiguous()",
    }
    for name, (path, line) in markers.items():
        assert Path(path) == Path(seed.__file__)
        assert expected_code[name] in lines[line - 1], (name, lines[line - 1])
        if name in seed.IDIOMS:
            assert seed.IDIOMS[name].source_line() == (path, line)


def test_marker_syntax(tmp_path):
    """What lit.cfg.py's %{seed-line:NAME} and the tests' source_line() both read."""
    source = tmp_path / "model.py"
    source.write_text("x = 1\n"
                      "y = f(x)  # seed-idiom: some-idiom\n"
                      "# seed idiom: not-a-marker\n"
                      "z = g(y)  #seed-idiom:other-part\n")
    assert marker_lines(source) == {"some-idiom": (str(source), 2), "other-part": (str(source), 4)}


def test_every_seed_idiom_of_the_knowledge_table_has_modules():
    from harness.knowledge.idioms import KNOWN

    assert sorted(k.name for k in KNOWN.values() if k.seed) == sorted(seed.IDIOMS)
    assert len(seed.IDIOMS) == 6


def test_hints_name_the_fix_and_the_2022_diagnostic():
    for idiom in seed.IDIOMS.values():
        assert idiom.ops and idiom.messages
        assert all(op.startswith("torch.") for op in idiom.ops)
        assert len(idiom.hint) > 40 and len(idiom.seen_2022) > 40
