"""The tools over records and IR files: explain, bisect, reduce, report. They never reach back
up the data path (no torch, no frontends, no models)."""
