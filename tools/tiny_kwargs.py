#!/usr/bin/env python3
"""The tiny preset's keyword arguments of every transformers model type, one line per type
(``TYPE<TAB>JSON``, keys sorted; ``ERROR ...`` where the preset itself raises), without building
a model: only the config classes' defaults are read (15-20 s for the 622 types). Dump before and
after a change to the preset and diff the two files: the types whose kwargs moved are the ones
the change reaches (a change meant for the types that did not build must leave the others as
they were).

    python tools/tiny_kwargs.py before.tsv   # then change harness/models/hf_config.py ...
    python tools/tiny_kwargs.py after.tsv && diff before.tsv after.tsv
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the file to write (TYPE<TAB>JSON per line)")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    from harness.models import hf_config, hf_resolve

    lines = []
    for model_type in hf_resolve.model_types():
        try:
            kwargs = hf_config.tiny_kwargs(hf_resolve.config_class(model_type))
            text = json.dumps(kwargs, sort_keys=True, default=repr)
        except Exception as error:  # one type's failure is a row, not the end of the dump
            text = f"ERROR {type(error).__name__}: {' '.join(str(error).split())[:200]}"
        lines.append(f"{model_type}\t{text}\n")
    args.out.write_text("".join(lines))
    print(f"{len(lines)} types -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
