"""FACT, DeepResearch Bench's citation check, run only against a fetcher the user supplies.

Upstream's pipeline (``utils/extract.py``, ``deduplicate.py``, ``scrape.py``, ``validate.py``, ``stat.py``), per report:

1. **extract**: the judge lists every cited statement as ``{"fact", "ref_idx", "url"}`` (one call; a reply that is
   not a JSON list leaves FACT unscored for the report);
2. **deduplicate**: statements are grouped by URL; a group of more than one goes to the judge, which returns the
   1-based indices to keep (an unusable answer keeps them all);
3. **fetch**: each URL's page text comes from the fetcher (upstream: the Jina reader); a fetch that fails gives
   ``scrape failed: <why>``, as upstream's scraper does;
4. **validate**: per URL, the judge marks each statement ``supported``, ``unsupported`` or ``unknown`` against the
   page (up to 3 calls until the reply is a list with one entry per statement);
5. **count**: citations are the statements judged other than ``unknown``; supported ones are valid.

Upstream reports, over the reports with citations, the citation accuracy (valid / citations) and the effective
citations (valid per report). The prompts are read from the clone's ``utils/*.py`` (never run). Offline, with no
fetcher, FACT does not run and every record says so.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from pytest_jeval.benchmarks._research.judgelog import JudgeFailed, JudgeLog
from pytest_jeval.benchmarks._research.upstream import UpstreamError, literal

__all__ = ["Fetcher", "fact_prompts", "run_fact", "summarize_fact"]

Fetcher = Callable[[str], str]
"""``fetch(url) -> the page's text``; raise to report the page as not fetched."""

PROMPT_FILES = {"extract": "utils/extract.py", "dedupe": "utils/deduplicate.py", "validate": "utils/validate.py"}
VALIDATE_ATTEMPTS = 3


def fact_prompts(clone: Path) -> dict[str, str]:
    """The three FACT prompts, English and Chinese (``extract_en``, ``extract_zh``, ...), from the clone's files;
    UpstreamError when one is missing."""
    found: dict[str, str] = {}
    for step, rel in PROMPT_FILES.items():
        for lang, name in (("en", "prompt_template_en"), ("zh", "prompt_template")):
            value = literal(clone / rel, name)
            if not isinstance(value, str):
                raise UpstreamError(f"{clone / rel}: {name} is not a string")
            found[f"{step}_{lang}"] = value
    return found


def _unfence(text: str) -> str:
    return text.replace("```json", "").replace("```", "")


def _remove_urls(text: str) -> str:
    return re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r"[\1]", text)


def _extract(log: JudgeLog, prompt: str) -> list[dict[str, Any]] | None:
    reply = log.ask("fact.extract", prompt)
    if not reply:
        return None
    text = _unfence(reply)
    for bad, good in (("\\>", ">"), ("\\<", "<"), ("\\+", "+"), ("\\~", "~")):
        text = text.replace(bad, good)
    try:
        found = json.loads(text)
    except ValueError:
        return None
    if not isinstance(found, list) or not all(isinstance(c, dict) and "fact" in c and "url" in c for c in found):
        return None
    return [{**c, "fact": _remove_urls(str(c["fact"]))} for c in found]


def _dedupe(log: JudgeLog, template: str, n: int, facts: list[str]) -> list[str]:
    if len(facts) == 1:
        return facts
    statements = "\n".join(f"{i + 1}. {fact}" for i, fact in enumerate(facts))
    try:
        kept = json.loads(_unfence(log.ask(f"fact.dedupe.{n}", template.format(statements=statements))))
    except (ValueError, JudgeFailed):
        kept = []
    if (not isinstance(kept, list) or not kept or 0 in kept or len(kept) > len(facts)
            or not all(isinstance(i, int) and 1 <= i <= len(facts) for i in kept)):
        kept = list(range(1, len(facts) + 1))
    return [facts[i - 1] for i in kept]


def _validate(log: JudgeLog, template: str, n: int, page: str, facts: list[str]) -> list[str] | None:
    statements = "\n".join(f"{i + 1}. {fact}" for i, fact in enumerate(facts))
    for attempt in range(1, VALIDATE_ATTEMPTS + 1):
        try:
            found = json.loads(_unfence(log.ask(f"fact.validate.{n}.{attempt}",
                                                template.format(reference=page, statements=statements),
                                                nonce=attempt - 1)))
        except ValueError:
            continue
        if isinstance(found, list) and len(found) == len(facts) and all(isinstance(v, dict) for v in found):
            return [str(v.get("result")) for v in found]
    return None


def run_fact(log: JudgeLog, fetch: Fetcher | None, *, report: str, prompts: Mapping[str, str],
             language: str) -> dict[str, Any]:
    """FACT for one report (see the module docstring): ``{"status": "run", "citations", "supported", ...}``, or
    ``{"status": "unscored", "reason"}``. ``fetch`` None replays stored judge calls without fetching."""
    lang = "zh" if language == "zh" else "en"
    try:
        cited = _extract(log, prompts.get(f"extract_{lang}", "").format(report_text=report))
    except JudgeFailed as exc:
        return {"status": "unscored", "reason": f"extract: {exc}"}
    if cited is None:
        return {"status": "unscored", "reason": "extract: the judge's reply is not a JSON list of cited statements"}
    groups: dict[str, list[str]] = {}
    for c in cited:
        groups.setdefault(str(c["url"]), []).append(str(c["fact"]))
    citations = supported = 0
    per_url: list[dict[str, Any]] = []
    for n, (url, facts) in enumerate(groups.items(), 1):
        kept = _dedupe(log, prompts.get(f"dedupe_{lang}", ""), n, facts)
        if fetch is None:
            page = "(replayed)"
        else:
            try:
                page = fetch(url)
            except Exception as exc:  # the user's fetcher: any failure is a page not fetched
                page = f"scrape failed: {type(exc).__name__}: {exc}"
        try:
            results = _validate(log, prompts.get(f"validate_{lang}", ""), n, page, kept)
        except JudgeFailed as exc:
            per_url.append({"url": url, "statements": len(kept), "error": str(exc)})
            continue
        if results is None:
            per_url.append({"url": url, "statements": len(kept), "error": "no usable validation reply"})
            continue
        checked = [r for r in results if r != "unknown"]
        citations += len(checked)
        supported += sum(1 for r in checked if r == "supported")
        per_url.append({"url": url, "statements": len(kept), "results": results})
    return {"status": "run", "extracted": len(cited), "urls": len(groups), "citations": citations,
            "supported": supported, "per_url": per_url}


def summarize_fact(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Upstream's FACT figures over the reports that cited something: citation accuracy (supported / citations,
    x100) and effective citations (supported per report). None when no record ran FACT."""
    ran = [r["fact"] for r in records if isinstance(r.get("fact"), dict) and r["fact"].get("status") == "run"]
    if not ran:
        return None
    with_citations = [f for f in ran if f.get("extracted")]
    total = sum(int(f["citations"]) for f in with_citations)
    valid = sum(int(f["supported"]) for f in with_citations)
    n = len(with_citations)
    return {"citation_accuracy": 100 * valid / total if total else None,
            "effective_citations": valid / n if n else None, "reports": len(ran), "reports_with_citations": n,
            "unscored": sum(1 for r in records if isinstance(r.get("fact"), dict) and r["fact"].get("status")
                            == "unscored")}
