"""Worker process for symbolic math comparison (run as a script, never imported by the parent).

Reads JSON lines ``{"pred": str, "gold": str, "timeout": int}`` on stdin and
answers each with ``{"equal": bool | null, "error": str | null}`` on stdout.
It uses math-verify (LaTeX -> SymPy) in its own main thread, so math-verify's
signal-based timeouts work here; the parent additionally kills this process
when an answer does not come back in time (e.g. a C-level big-integer power).

Only the standard library and math-verify are imported: the script must not
depend on ``pytest_jeval`` being importable.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import Any


def _compare_factory() -> Any:
    from math_verify import LatexExtractionConfig, parse, verify

    config = [LatexExtractionConfig()]

    def compare(pred: str, gold: str, timeout: int) -> bool:
        gold_parsed = parse("\\boxed{" + gold + "}", extraction_config=config, parsing_timeout=timeout)
        pred_parsed = parse("\\boxed{" + pred + "}", extraction_config=config, parsing_timeout=timeout)
        if not gold_parsed or not pred_parsed:
            return False
        return bool(verify(gold_parsed, pred_parsed, timeout_seconds=timeout))

    return compare


def main() -> int:
    """Serve comparison requests until stdin closes."""
    logging.disable(logging.CRITICAL)  # math-verify logs timeouts; the reply says it all
    out, sys.stdout = sys.stdout, sys.stderr  # only replies go to the real stdout
    try:
        compare = _compare_factory()
        unavailable = None
    except ImportError as exc:
        compare, unavailable = None, f"math-verify is not installed: {exc}"
    out.write(json.dumps({"ready": compare is not None, "error": unavailable}) + "\n")
    out.flush()
    if compare is None:
        return 1
    for line in sys.stdin:
        reply: dict[str, Any] = {"equal": None, "error": None}
        try:
            req = json.loads(line)
            reply["equal"] = compare(str(req["pred"]), str(req["gold"]), max(1, int(req.get("timeout", 5))))
        except Exception as exc:
            reply["error"] = f"{type(exc).__name__}: {exc}"[:500]
        out.write(json.dumps(reply) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
