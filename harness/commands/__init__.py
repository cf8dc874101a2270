"""The subcommands of ``harness``, grouped by what they start from; ``harness.cli`` is the
front door that parses the command line and dispatches here."""
