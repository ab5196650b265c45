"""email_triage: classify an e-mail (category, priority) and draft a short reply.

Synthetic, shipped as ``data/email_triage.jsonl`` (30 e-mails over 8 categories and 4
priorities). Schema: ``id``, ``sender``, ``subject``, ``body``, ``category`` (one of
``CATEGORIES``), ``priority`` (one of ``PRIORITIES``), ``reply_expected`` (false for spam
and phishing), ``required`` (groups of alternatives: a good draft contains at least one
alternative of every group, matched case-insensitively as substrings, so ``apolog``
accepts "apologise" and "apologies") and ``reference_draft`` (a gold reply meeting every
group; empty or "NO REPLY" when none is expected).

The model answers ``CATEGORY:``, ``PRIORITY:`` and ``DRAFT:`` (the draft runs to the end
of the reply). Scoring:

* category (1/0): the label, lower-cased with spaces and dashes as ``_``, after a few
  synonyms (``tech support`` -> ``technical_support``, ``human resources`` -> ``hr``, ...).
* priority: 1.0 exact, 0.5 one level away (urgent > high > normal > low), else 0.
* draft: the share of required groups present; when no reply is expected, 1.0 for an
  empty draft or "no reply"/"none", else 0.
* ``score = 0.4 * category + 0.3 * priority + 0.3 * draft``; ``is_correct`` iff
  ``score >= 0.75``: the category must be right, and then either the exact priority with
  a draft that has at least one required element, or a priority one level off with a
  draft that has at least two thirds of them.
* A reply with neither a category nor a priority is unscored.
"""

from __future__ import annotations

import re
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._usecase import before_label, composite_score, labelled_field, summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer

WEIGHTS = {"category": 0.4, "priority": 0.3, "draft": 0.3}
THRESHOLD = 0.75

CATEGORIES = {
    "billing": "invoices, charges, refunds, payment status, billing details",
    "technical_support": "outages, bugs, errors and how-to questions about the product",
    "sales": "pricing, quotes, plans and discounts for prospective or expanding customers",
    "security": "account compromise, phishing that impersonates us or our colleagues, exposed data, vulnerabilities",
    "hr": "leave, onboarding, workplace conduct, office policies for employees and new hires",
    "scheduling": "meetings, rooms, calendar changes and call links",
    "spam": "unsolicited marketing, scams and junk",
    "feedback": "praise, complaints and suggestions about the product or service",
}
PRIORITIES = ("urgent", "high", "normal", "low")
DRAFT_LABELS = ("DRAFT", "DRAFT REPLY", "REPLY", "RESPONSE")
PRIORITY_GUIDE = (
    "urgent: an outage, a security incident, or money/customers being lost right now - act within the hour; "
    "high: important and time-sensitive (today or tomorrow, a pending deal, a wrong charge, a serious HR matter); "
    "normal: a routine request to answer within a few days; "
    "low: no time pressure or no action needed (thanks, spam, nice-to-have questions)"
)
_CATEGORY_SYNONYMS = {
    "tech_support": "technical_support", "technical": "technical_support", "support": "technical_support",
    "it_support": "technical_support", "technical_issue": "technical_support", "tech": "technical_support",
    "human_resources": "hr", "people": "hr", "invoice": "billing", "invoicing": "billing", "payment": "billing",
    "payments": "billing", "finance": "billing", "sales_inquiry": "sales", "sales_lead": "sales",
    "schedule": "scheduling", "calendar": "scheduling", "meeting": "scheduling", "junk": "spam",
    "phishing": "security", "product_feedback": "feedback",
}
_PRIORITY_SYNONYMS = {
    "critical": "urgent", "emergency": "urgent", "p0": "urgent", "p1": "urgent", "p2": "high", "medium": "normal",
    "moderate": "normal", "p3": "normal", "p4": "low", "routine": "normal",
}
_NO_REPLY = re.compile(r"^\W*(no reply|none|n/?a|no response|do not reply|don't reply|no reply needed|-)\W*$", re.I)

PROMPT = """Triage the following e-mail.

From: {sender}
Subject: {subject}

{body}

Categories:
{categories}

Priorities: {priorities}.

Reply in exactly this format:
CATEGORY: <one category>
PRIORITY: <urgent|high|normal|low>
DRAFT:
<a short reply to the sender, or NO REPLY for spam and phishing>"""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One e-mail with its gold triage."""
    if row["category"] not in CATEGORIES or row["priority"] not in PRIORITIES:
        raise ValueError(f"{row['id']}: unknown category or priority")
    if row["reply_expected"] != bool(row["required"]):
        raise ValueError(f"{row['id']}: a reply is expected exactly when there are required elements")
    return Sample(
        id=row["id"],
        input=f"From: {row['sender']}\nSubject: {row['subject']}\n\n{row['body']}",
        target=f"{row['category']} / {row['priority']}",
        subject=row["category"],
        metadata={
            "sender": row["sender"],
            "subject": row["subject"],
            "body": row["body"],
            "category": row["category"],
            "priority": row["priority"],
            "reply_expected": bool(row["reply_expected"]),
            "required": [list(g) for g in row["required"]],
        },
    )


def prompt(sample: Sample) -> str:
    """The e-mail, the label definitions and the answer format."""
    m = sample.metadata
    categories = "\n".join(f"- {name}: {text}" for name, text in CATEGORIES.items())
    return PROMPT.format(sender=m["sender"], subject=m["subject"], body=m["body"], categories=categories,
                         priorities=PRIORITY_GUIDE)


def normalize_category(text: str | None) -> str | None:
    """A category label from free text (``Technical Support`` -> ``technical_support``)."""
    if not text:
        return None
    key = re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")
    key = _CATEGORY_SYNONYMS.get(key, key)
    if key in CATEGORIES:
        return key
    for name in CATEGORIES:  # "billing (refund request)"
        if key.startswith(name + "_"):
            return name
    return key or None


def normalize_priority(text: str | None) -> str | None:
    """A priority from free text (``High``, ``P1``, ``medium``)."""
    if not text:
        return None
    word = re.sub(r"[^a-z0-9]+", " ", text.lower()).split()
    if not word:
        return None
    key = _PRIORITY_SYNONYMS.get(word[0], word[0])
    return key


def draft_score(draft: str, sample: Sample) -> tuple[float, list[list[str]]]:
    """Share of required groups present in the draft (and the missing groups)."""
    m = sample.metadata
    if not m["reply_expected"]:
        ok = not draft.strip() or bool(_NO_REPLY.match(draft.strip()))
        return (1.0 if ok else 0.0), []
    low = " ".join(draft.lower().split())
    missing = [g for g in m["required"] if not any(alt.lower() in low for alt in g)]
    return 1 - len(missing) / len(m["required"]), missing


def score_triage(reply: str, sample: Sample) -> Score:
    """Composite of category (0.4), priority (0.3, half for one level off) and draft (0.3); correct iff >= 0.75."""
    m = sample.metadata
    head = before_label(reply, *DRAFT_LABELS)  # the draft may itself contain "Priority:" etc.
    category = normalize_category(labelled_field(head, "CATEGORY", "LABEL"))
    priority = normalize_priority(labelled_field(head, "PRIORITY", "URGENCY"))
    draft = labelled_field(reply, *DRAFT_LABELS, multiline=True, first=True) or ""
    if category is None and priority is None:
        return Score.unscorable("no CATEGORY or PRIORITY line", expected=sample.target)
    cat = 1.0 if category == m["category"] else 0.0
    if priority in PRIORITIES:
        distance = abs(PRIORITIES.index(priority) - PRIORITIES.index(m["priority"]))
        pri = 1.0 if distance == 0 else 0.5 if distance == 1 else 0.0
    else:
        pri = 0.0
    dra, missing = draft_score(draft, sample)
    return composite_score(
        {"category": cat, "priority": pri, "draft": dra}, WEIGHTS, THRESHOLD,
        extracted=f"{category} / {priority}",
        expected=sample.target,
        metadata={"predicted_category": category, "predicted_priority": priority, "missing_elements": missing,
                  "draft_chars": len(draft)},
    )


BENCHMARK = Benchmark(
    name="email_triage",
    category="use-case",
    description="E-mail triage: category, priority and a reply draft with required elements",
    bundled_files=("data/email_triage.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="email_triage",
    scoring="composite: 0.4 category + 0.3 priority + 0.3 draft elements; correct >= 0.75",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_email_triage(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_triage(response.text, sample))


@register_scorer("email_triage", needs_sample=True)
def record_email_triage(record: dict[str, Any], sample: Sample) -> Score:
    """email_triage: category, priority and draft elements."""

    result: Score = score_triage(answer_of(record), sample)
    return result
