"""Frontends: a model in, torch-dialect IR out (TorchScript through our importer, FX through
the wheel's ``fx_importer``). They know nothing of subprocesses or pipelines, except ``compat``,
the old all-in-one ``compile`` API."""
