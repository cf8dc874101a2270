#!/usr/bin/env python3
"""Does the reference evaluator cover the ops of real models? 21 Hugging Face architectures at
tiny size (2 layers, hidden 64), each:

  ts-raw     traced, imported by the project's TorchScript importer (object graph)
  ts-torch   that IR after torchscript-to-torch (the torch backend contract)
  fx-raw     torch.export + the wheel's fx_importer
  fx-torch   that IR after fx-to-torch

For each IR: the op kinds the evaluator cannot evaluate (coverage), and, when it covers them
all, the evaluator's output against eager (max abs diff). Prints a table and the missing ops.

    python tools/reference_coverage.py                 # all 21
    python tools/reference_coverage.py gpt2 llama      # some
    python tools/reference_coverage.py --json out.json

Weights are random (built from the Config classes), inputs are token ids of batch 1, length 8.
For the FX IRs, non-persistent buffers (rotary inv_freq, BERT's position_ids) are made persistent
before torch.export: fx_importer looks for buffers in the state_dict only ("Could not find state
mapping for buffer", the FX path's blocker), and this survey is about the evaluator.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import torch

SEQ = 8
VOCAB = 128
# model type -> config overrides beyond the common tiny sizes (names differ per architecture)
ARCHITECTURES: dict[str, dict] = {
    "gpt2": {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": 128},
    "gpt_neo": {"hidden_size": 64, "num_layers": 2, "num_heads": 4,
                "attention_types": [[["global", "local"], 1]], "intermediate_size": 128,
                "window_size": 4},
    "gpt_neox": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "intermediate_size": 128},
    "gptj": {"n_embd": 64, "n_layer": 2, "n_head": 4, "n_inner": 128, "rotary_dim": 8},
    "llama": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 128},
    "mistral": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
                "intermediate_size": 128},
    "qwen2": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 128},
    "qwen3": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 128, "head_dim": 16},
    "phi": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128},
    "phi3": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 4,
             "intermediate_size": 128, "pad_token_id": 0},
    "gemma": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
              "intermediate_size": 128, "head_dim": 16},
    "falcon": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4},
    "bloom": {"hidden_size": 64, "n_layer": 2, "n_head": 4},
    "opt": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "ffn_dim": 128,
            "word_embed_proj_dim": 64},
    "mpt": {"d_model": 64, "n_layers": 2, "n_heads": 4},
    "stablelm": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                 "num_key_value_heads": 4, "intermediate_size": 128},
    "bert": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128},
    "roberta": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                "intermediate_size": 128},
    "distilbert": {"dim": 64, "n_layers": 2, "n_heads": 4, "hidden_dim": 128},
    "t5": {"d_model": 64, "num_layers": 2, "num_heads": 4, "d_kv": 16, "d_ff": 128},
    "bart": {"d_model": 64, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
             "decoder_attention_heads": 4, "encoder_ffn_dim": 128, "decoder_ffn_dim": 128},
}
LEVELS = ("ts-raw", "ts-torch", "fx-raw", "fx-torch")


class LastHidden(torch.nn.Module):
    """The base model's first output (last hidden state) from ids and mask: one tensor to trace."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False,
                          return_dict=True)[0]


def build(model_type: str):
    import transformers

    config = transformers.AutoConfig.for_model(model_type, vocab_size=VOCAB, max_position_embeddings=64,
                                               **ARCHITECTURES[model_type])
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    if model_type == "t5":
        model = transformers.T5EncoderModel(config)
    else:
        model = transformers.AutoModel.from_config(config, attn_implementation="eager")
    wrapper = LastHidden(model).eval()
    ids = torch.randint(1, VOCAB, (1, SEQ))
    mask = torch.ones(1, SEQ, dtype=torch.long)
    if model_type == "t5":  # the encoder takes no use_cache
        wrapper.forward = lambda input_ids, attention_mask: model(input_ids=input_ids,
                                                                  attention_mask=attention_mask)[0]
    return wrapper, (ids, mask)


def irs(model_type: str, workdir: Path) -> tuple[dict[str, Path], torch.Tensor, tuple, dict[str, str]]:
    from harness.compiler import pipelines
    from harness.compiler.mlir import WriteOptions, write_module
    from harness.compiler.runner import RunOptions, run_pipeline
    from harness.frontends import fx
    from harness.frontends.compat import import_torchscript

    wrapper, inputs = build(model_type)
    with torch.no_grad():
        eager = wrapper(*inputs)
    files: dict[str, Path] = {}
    errors: dict[str, str] = {}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            builder = import_torchscript(wrapper, inputs, use_tracing=True)
        files["ts-raw"] = write_module(builder.module, workdir / f"{model_type}.ts.mlir",
                                       WriteOptions(keep_weights=True))
    except Exception as e:  # a table row, not a crash of the survey
        errors["ts-raw"] = f"{type(e).__name__}: {str(e)[:200]}"
    for m in wrapper.modules():  # see the module docstring
        m._non_persistent_buffers_set.clear()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = fx.export_and_import(wrapper, inputs, name=model_type)
        files["fx-raw"] = write_module(module, workdir / f"{model_type}.fx.mlir",
                                       WriteOptions(keep_weights=True))
    except Exception as e:
        errors["fx-raw"] = f"{type(e).__name__}: {str(e)[:200]}"
    for raw, lowered, pipeline in (("ts-raw", "ts-torch", "torchscript-to-torch"),
                                   ("fx-raw", "fx-torch", "fx-to-torch")):
        if raw not in files:
            continue
        out = workdir / f"{model_type}.{lowered}.mlir"
        record = run_pipeline(files[raw], pipelines.default().resolve(pipeline),
                              options=RunOptions(output_path=str(out)))
        if record.ok:
            files[lowered] = out
        else:
            errors[lowered] = str(record.signature)[:200]
    return files, eager, inputs, errors


def survey(model_type: str, workdir: Path) -> dict:
    from torch_mlir import ir

    from harness.compiler.mlir import new_context
    from harness.execute.reference import coverage, evaluate

    row: dict = {"model": model_type}
    start = time.perf_counter()
    try:
        files, eager, inputs, errors = irs(model_type, workdir)
    except Exception as e:
        row["error"] = f"{type(e).__name__}: {str(e)[:300]}"
        return row
    for level in LEVELS:
        if level not in files:
            row[level] = {"error": errors.get(level, "not produced")}
            continue
        with new_context():
            module = ir.Module.parseFile(str(files[level]))
            found = coverage(module.operation)
            entry = {"op_kinds": len(found.supported) + len(found.unsupported),
                     "ops": sum(found.supported.values()) + sum(found.unsupported.values()),
                     "unsupported": found.unsupported,
                     "kinds": sorted(found.supported) + sorted(found.unsupported)}
            if found.complete:
                try:
                    result = evaluate(module.operation, [t.numpy() for t in inputs])
                    out = result.outputs[0]
                    entry["max_abs_diff"] = float((out.double() - eager.double()).abs().max())
                    entry["type_notes"] = len(result.type_notes)
                except Exception as e:
                    entry["eval_error"] = f"{type(e).__name__}: {str(e)[:300]}"
        row[level] = entry
    row["seconds"] = time.perf_counter() - start
    return row


def _cell(level: str, e: dict) -> str:
    """One level's result in a row of the table."""
    if "error" in e:
        return f"{level}: -"
    if e.get("unsupported"):
        return f"{level}: {len(e['unsupported'])} missing"
    if "eval_error" in e:
        return f"{level}: eval error"
    return f"{level}: ok {e.get('max_abs_diff', float('nan')):.1e}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", help=f"model types (default: all {len(ARCHITECTURES)})")
    parser.add_argument("--json", help="write the rows to this file")
    args = parser.parse_args()
    models = args.models or list(ARCHITECTURES)
    rows = []
    with tempfile.TemporaryDirectory(prefix="harness-coverage-") as tmp:
        for model_type in models:
            row = survey(model_type, Path(tmp))
            rows.append(row)
            error = f"  ({row['error']})" if "error" in row else ""
            print(f"{model_type:11s} " + " | ".join(_cell(level, row.get(level, {})) for level in LEVELS)
                  + error, flush=True)
    missing: Counter = Counter()
    covered = {level: 0 for level in LEVELS}
    present = {level: 0 for level in LEVELS}
    for row in rows:
        for level in LEVELS:
            e = row.get(level, {})
            if "error" in e or not e:
                continue
            present[level] += 1
            if not e.get("unsupported") and "eval_error" not in e:
                covered[level] += 1
            for name in e.get("unsupported", {}):
                missing[name] += 1
    kinds = {level: set() for level in LEVELS}
    for row in rows:
        for level in LEVELS:
            entry = row.get(level)
            kinds[level] |= set(entry.get("kinds", []) if isinstance(entry, dict) else [])
    print("\nop kinds seen: " + ", ".join(f"{level} {len(kinds[level])}" for level in LEVELS) +
          f"; {len(set().union(*kinds.values()))} in all")
    print("covered and evaluated (of the IRs produced): " +
          ", ".join(f"{level} {covered[level]}/{present[level]}" for level in LEVELS))
    print("ops missing (models): " + (", ".join(f"{k} ({n})" for k, n in missing.most_common()) or "none"))
    errors = [(r["model"], level, r[level]["eval_error"]) for r in rows for level in LEVELS
              if isinstance(r.get(level), dict) and "eval_error" in r[level]]
    for model, level, err in errors:
        print(f"eval error: {model} {level}: {err}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
