"""``harness sweep --suite NAME``: model lists nobody here wrote, PyTorch's compiler benchmark
suites, as MODEL names the port takes (at tiny size, like every type).

The lists are copies of pytorch/pytorch's, shipped in ``suite_lists/`` as they are, with where each
came from (:data:`SUITES`). They are the versions the search index stored (the ``fetch`` of the
whole repository, 4 GB, was refused); the issue counts 55 and 18 entries, so newer versions
differ.

- ``dynamo-hf``: ``benchmarks/dynamo/huggingface_models_list.txt`` (``NAME,BATCH``): NAME is a
  transformers class (with its task head), which ``harness port`` takes as it is, or one of the
  aliases of ``EXTRA_MODELS`` in ``benchmarks/dynamo/huggingface.py`` (a hub config and an auto
  class), mapped in :data:`HF_ALIASES` to the class that auto class gives for that config's type.
- ``dynamo-timm``: ``benchmarks/dynamo/timm_models_list.txt`` (``NAME BATCH``) -> ``timm:NAME``
  (deprecated names such as ``adv_inception_v3`` are timm's own aliases; timm resolves them).

The batch sizes are the benchmarks' GPU batches; the port keeps its own (1).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness.enums import ParsableEnum
from harness.errors import ModelOptionError, UnsupportedModelError, VisionLibraryError

FOLDER = Path(__file__).resolve().parent / "suite_lists"

#: ``EXTRA_MODELS`` of benchmarks/dynamo/huggingface.py: a name -> (hub config, auto class);
#: here the class that auto class builds for that config's model type.
HF_ALIASES = {
    "AllenaiLongformerBase": "LongformerForMaskedLM",  # allenai/longformer-base-4096, MaskedLM
    "BigBird": "BigBirdForMaskedLM",  # BigBirdConfig(attention_type="block_sparse"), MaskedLM
    "CamemBert": "CamembertForMaskedLM",  # camembert-base, MaskedLM
    "DistillGPT2": "GPT2LMHeadModel",  # distilgpt2, CausalLM
    "GoogleFnet": "FNetForMaskedLM",  # google/fnet-base, MaskedLM
    "Reformer": "ReformerForMaskedLM",  # ReformerConfig(), MaskedLM
    "T5Small": "T5ForConditionalGeneration",  # t5-small, Seq2SeqLM
    "YituTechConvBert": "ConvBertForMaskedLM",  # YituTech/conv-bert-base, MaskedLM
}


class SuiteName(ParsableEnum):
    DYNAMO_HF = "dynamo-hf"
    DYNAMO_TIMM = "dynamo-timm"


@dataclass(frozen=True)
class Suite:
    """One shipped list and where it came from."""

    file: str  # in suite_lists/
    origin: str  # repository and path
    commit: str  # the commit the copy was taken at
    separator: str  # between a name and its batch size


SUITES = {
    SuiteName.DYNAMO_HF: Suite(
        "dynamo_huggingface_models_list.txt",
        "github.com/pytorch/pytorch benchmarks/dynamo/huggingface_models_list.txt",
        "de88566807a8490dda152b7ee8bfc53a38acb295", ","),
    SuiteName.DYNAMO_TIMM: Suite(
        "dynamo_timm_models_list.txt",
        "github.com/pytorch/pytorch benchmarks/dynamo/timm_models_list.txt",
        "efaa3ed9c524d99b98a58801ae392ad88c05b452", " "),
}


def entries(name: SuiteName) -> list[str]:
    """The list's names, in its order."""
    suite = SUITES[name]
    lines = (FOLDER / suite.file).read_text(encoding="utf-8").splitlines()
    return [line.split(suite.separator)[0].strip() for line in lines if line.strip()]


def suite_models(name: SuiteName) -> list[str]:
    """The MODEL names ``harness port`` takes for the list's entries."""
    if name is SuiteName.DYNAMO_TIMM:
        return [f"timm:{entry}" for entry in entries(name)]
    return [HF_ALIASES.get(entry, entry) for entry in entries(name)]


def absent_models(models: list[str]) -> dict[str, str]:
    """The entries of ``models`` the installed libraries do not have, each with its refusal:
    PyTorch's lists are not pinned to our versions, and a name they give may since have been
    removed (transformers 5 dropped Speech2Text2ForCausalLM; timm 1.0 has no gluon_xception65).
    A ``timm:``/``torchvision:`` name is checked as its port checks it; where its library does
    not import here (the [vision] extra is not installed), the name is an unsupported row that
    says so, as ``--all`` does, not a crashed port. Imports transformers (and the libraries
    named), not to build anything."""
    import transformers

    have = set(dir(transformers))
    absent = {m: (f"{UnsupportedModelError.PREFIX} '{m}': transformers {transformers.__version__} has "
                  "no class of that name (removed or renamed since the list was written); the "
                  "rest of the suite runs without it")
              for m in models if ":" not in m and m not in have}
    return {**absent, **_absent_library_names(models)}


def _absent_library_names(models: list[str]) -> dict[str, str]:
    from harness.models.hf_resolve import library_kind, resolve

    named = [m for m in models if library_kind(m) is not None]
    if not named:
        return {}
    from harness.models import vision_libs

    absent: dict[str, str] = {}
    for model in named:
        spec = resolve(model)
        try:
            vision_libs.check_name(spec.kind, vision_libs.library(spec.kind, model), spec)
        except VisionLibraryError as error:
            absent[model] = (f"{UnsupportedModelError.PREFIX} '{model}': the [vision] extra does "
                             f"not import in this Python ({error.reason}); install it with "
                             "pip install -e '.[vision]' (docs/port.md: it needs a torch that "
                             "fits torchvision) to port it; the rest of the suite runs without it")
        except ModelOptionError as error:
            absent[model] = (f"{UnsupportedModelError.PREFIX} '{model}': {error} (removed or renamed "
                             "since the list was written); the rest of the suite runs without it")
    return absent
