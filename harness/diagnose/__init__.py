"""The tools over records and IR files: explain, bisect, reduce, report, diff, the numerics
search. They never reach back up the data path (no frontends, no models); torch itself is
imported only where a tool evaluates IR in eager PyTorch (the numerics search, a runtime
report's inputs), and never by run, explain, bisect, reduce or report without --numerics
(tests/cli/test_cli_imports.py)."""
