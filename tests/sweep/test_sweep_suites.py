"""``harness sweep --suite``: PyTorch's benchmark lists, shipped with their origin, as MODEL
names the port resolves."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from support import ROOT

from harness.errors import HarnessError
from harness.models.hf_resolve import SourceKind, resolve
from harness.sweep.suites import HF_ALIASES, SUITES, SuiteName, entries, suite_models


def test_the_lists_are_shipped_with_their_origin():
    assert len(entries(SuiteName.DYNAMO_HF)) == 53
    assert len(entries(SuiteName.DYNAMO_TIMM)) == 62
    for suite in SUITES.values():
        assert suite.origin.startswith("github.com/pytorch/pytorch benchmarks/dynamo/")
        assert re.fullmatch(r"[0-9a-f]{40}", suite.commit)


def test_every_alias_is_in_the_list():
    assert set(HF_ALIASES) <= set(entries(SuiteName.DYNAMO_HF))


def test_the_hf_list_resolves_to_head_classes():
    unresolved = {}
    for model in suite_models(SuiteName.DYNAMO_HF):
        try:
            spec = resolve(model)
        except HarnessError as error:
            unresolved[model] = str(error)
            continue
        assert spec.kind is SourceKind.TYPE and spec.head == model
    # transformers 5 removed Speech2Text2 (its sweep row says so)
    assert list(unresolved) == ["Speech2Text2ForCausalLM"]
    assert resolve("LongformerForMaskedLM").model_type == "longformer"  # AllenaiLongformerBase
    assert resolve("TrOCRForCausalLM").model_type == "trocr"  # a type with no base model


def test_the_timm_list_is_timm_names():
    models = suite_models(SuiteName.DYNAMO_TIMM)
    assert models[0] == "timm:adv_inception_v3"
    assert all(resolve(m).kind is SourceKind.TIMM for m in models)


def test_an_unknown_suite_is_refused():
    from harness.errors import UsageError

    with pytest.raises(UsageError):
        SuiteName.parse("torchbench")


def test_a_class_the_installed_transformers_lacks_is_an_unsupported_row(tmp_path, capsys):
    """Speech2Text2ForCausalLM (removed in transformers 5): no port runs for it; its record is
    ``unsupported`` with why, and the rest of the list is swept (it was 'crashed (no-record,
    exit 2)', the darkest cell, from the port's unknown-name error)."""
    from harness.sweep import records
    from harness.sweep.orchestrate import SweepRequest, select_models
    from harness.sweep.runner import SweepOptions
    from harness.sweep.suites import SuiteName
    from harness.sweep.suites import absent_models

    vision = importlib.util.find_spec("timm") is not None
    assert list(absent_models(["Speech2Text2ForCausalLM", "BertForMaskedLM", "timm:resnet18"])) == [
        "Speech2Text2ForCausalLM", *([] if vision else ["timm:resnet18"])]
    request = SweepRequest(SweepOptions(out=tmp_path), suites=(SuiteName.DYNAMO_HF,))
    models = select_models(request, note=print)
    assert "Speech2Text2ForCausalLM" not in models and len(models) == 51  # 53 entries, 52 distinct
    failure = records.read_result(tmp_path / "records" / "Speech2Text2ForCausalLM.json")
    assert isinstance(failure, records.RunFailure) and failure.reason == records.UNSUPPORTED
    assert "transformers 5.24.0 has no class of that name" in failure.detail
    assert "Speech2Text2ForCausalLM" in capsys.readouterr().out


VISION_PYTHON = os.environ.get("HARNESS_VISION_PYTHON", "/work/venv-vision213/bin/python")


@pytest.mark.skipif(not Path(VISION_PYTHON).is_file(), reason="no vision venv (HARNESS_VISION_PYTHON)")
def test_a_name_the_installed_timm_lacks_is_an_unsupported_row():
    # timm 1.0.29 has no gluon_xception65 (the dynamo list's): its port exited 2, "no-record"
    code = ("import json; from harness.sweep.suites import absent_models; "
            "print(json.dumps(absent_models(['timm:gluon_xception65', 'timm:resnet18'])))")
    proc = subprocess.run([VISION_PYTHON, "-c", code], capture_output=True, text=True, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    absent = json.loads(proc.stdout.strip().splitlines()[-1])
    assert list(absent) == ["timm:gluon_xception65"]
    assert "timm 1.0.29 has no model named 'gluon_xception65'" in absent["timm:gluon_xception65"]
    assert "Did you mean timm:xception65" in absent["timm:gluon_xception65"]


def test_library_names_are_unsupported_rows_where_the_vision_extra_does_not_import(tmp_path):
    """Issue 45 item 10: --suite dynamo-timm without the [vision] extra showed every model as
    'crashed', the board's worst status; now each is an unsupported row saying why, as --all
    says it, and no port runs for it."""
    from harness.sweep import records
    from harness.sweep.orchestrate import SweepRequest, select_models
    from harness.sweep.runner import SweepOptions
    from harness.sweep.suites import SuiteName, absent_models

    if importlib.util.find_spec("timm") is not None:
        pytest.skip("timm is installed in this Python")
    absent = absent_models(["timm:gluon_xception65", "torchvision:resnet18"])
    assert list(absent) == ["timm:gluon_xception65", "torchvision:resnet18"]
    assert all("the [vision] extra does not import in this Python" in why
               and "pip install -e '.[vision]'" in why for why in absent.values())
    notes: list[str] = []
    models = select_models(SweepRequest(SweepOptions(out=tmp_path), suites=(SuiteName.DYNAMO_TIMM,)),
                           note=notes.append)
    assert models == []
    rows = [records.read_result(p) for p in sorted((tmp_path / "records").glob("*.json"))]
    assert len(rows) > 50 and all(isinstance(r, records.RunFailure)
                                  and r.reason == records.UNSUPPORTED for r in rows)
