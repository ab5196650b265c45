"""A suite file resolved into a plan, without pytest: the TOML's models, ``--jeval-set`` overrides,
endpoint precedence, the benchmark catalog and dataset loading."""
