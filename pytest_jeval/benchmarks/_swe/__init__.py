"""Shared parts of the SWE-bench family (``swebench``, ``swefficiency``): SWE-bench-format instances run
without Docker.

| module | what it holds |
|---|---|
| :mod:`.instances` | the instance schema (SWE-bench's, with SWE-fficiency's additions) and the Hub loader |
| :mod:`.options` | the benchmarks' own settings (``[benchmarks.options]``) |
| :mod:`.cache` | where built things are kept (mirrors, environments, instance trees), built once under a lock |
| :mod:`.repos` | repository mirrors (bare clones or bundles in ``repos_dir``) and checkouts at a base commit |
| :mod:`.specs` | install recipes per (repo, version): the installed ``swebench`` package's, or a ``specs_file`` |
| :mod:`.envs` | one Python environment per (repo, version), built from the package index |
| :mod:`.trees` | one prepared checkout per instance (upstream's instance image), copied per episode |
| :mod:`.sandboxed` | running a script in a checkout in the sandbox, the environment mounted read-only |
| :mod:`.parsers` | the test log parsers of the Python repositories |
| :mod:`.grading` | test command, status map, FAIL_TO_PASS/PASS_TO_PASS report and resolution (FULL/PARTIAL/NO) |
| :mod:`.patches` | diffs: extraction from a reply, the files they touch, the test-file rule, applying them |
| :mod:`.tools` | the agent's tools over the checkout |
| :mod:`.prepare` | an instance's mirror, recipe, environment and tree, checked at collection, built when used |
| :mod:`.evaluate` | one patch graded on a fresh copy of the prepared checkout (SWE-bench's ``run_instance``) |
| :mod:`.episode` | the agent side (environment, submission, oracle) and the prompts |

See docs/swebench.md.
"""
