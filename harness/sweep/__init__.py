"""A sweep over many models: ``harness sweep`` and its static status board.

- :mod:`.runner`: ``harness port MODEL --json FILE`` per model in its own process (per-model
  timeout, records reused unless forced, ``--shard I/N``) and ``harness check`` on each port
  that lowered (``--numerics-check``);
- :mod:`.catalog`: ``--all``'s model types, and ``models.json`` (ported, refused, no record);
- :mod:`.records`: the sweep folder read back (port records, run failures, checks);
- :mod:`.merge`: ``--merge DIR...``, the shards' records joined;
- :mod:`.status`: the board's cells and the comparison with a baseline sweep;
- :mod:`.board`, :mod:`.highlight`: ``index.html``; :mod:`.progress`: one line per model;
- :mod:`.children`: the child processes, stopped with the sweep whatever ends it; :mod:`.warm`:
  the warm server they fork from (torch, transformers and torch_mlir imported once);
  :mod:`.lock`: one sweep per folder.

Records are the only state: no scheduler, no database.
"""
