"""The built-in evaluators, one module per family.

Every module of this package (except ``_private`` ones) is imported when the registry is first
used, and its ``@register`` classes become available by name: adding a family is adding a file.

* ``code``: exact_match, classification, numeric, json_match, trajectory (free, computed)
* ``sql``: SQL result equivalence on a SQLite database
* ``tool_calls``: BFCL-style function-call matching
* ``llm``: single-verdict LLM judges (factuality, closed_qa, llm_judge, ...)
* ``claims``: claim-level judges (faithfulness, chunk_relevance)
* ``pairwise``: A/B preference judged in both orders
"""

from __future__ import annotations

__all__: list[str] = []
