"""Exports of a finished run to outside services, at session end on the controller.

* :mod:`.wandb`: one Weights & Biases run per (benchmark, model) (``[run] wandb_*``);
* :mod:`.sheets`: one Google Sheets row per (benchmark, model) (``[run] sheets_*``);
* :mod:`.plugin`: checks the keys and the optional packages at configure time and runs
  the exports once the results writer has written every summary.

The rules are in ``docs/exports.md``.
"""
