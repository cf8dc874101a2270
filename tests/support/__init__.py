"""Helpers shared by the test files (tests/<package>/test_*.py): imported as ``support.NAME``;
tests/ is on sys.path (pyproject.toml's ``[tool.pytest.ini_options] pythonpath``)."""
