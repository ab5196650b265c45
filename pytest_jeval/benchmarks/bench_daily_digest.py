"""daily_digest: write a day's digest from calendar entries, messages and tasks.

Synthetic, shipped as ``data/daily_digest.jsonl`` (30 invented workdays: people, project code
names and tasks are made up, so the digest has to come from the inputs). Schema: ``id``,
``subject`` (how many meetings the day holds), ``person``, ``date``, ``weekday``,
``calendar`` (``[{date, start, end, title, with, status}]``, status ``confirmed`` or
``cancelled``), ``messages`` (``[{time, from, to, text}]``), ``tasks``
(``[{title, owner, due, priority, status}]``, status ``open`` or ``done``), ``required``
(``[{key, phrases, time, kind}]``: what the digest must mention; ``time`` ``HH:MM`` for
meetings, empty otherwise), ``distractors`` (``[{key, phrases, reason}]``: a cancelled
meeting, a meeting on another day, a message and a task meant for someone else or for
later, a task already done) and ``reference`` (a gold digest).

Scoring (:mod:`pytest_jeval.benchmarks._digest`): an item is mentioned when one of its
``phrases`` occurs as whole words in the normalised reply.

* ``coverage`` = required items mentioned / required items;
* ``exclusion`` = coverage * (1 - distractors mentioned / distractors);
* ``order`` = share of the pairs of timed required items that are both mentioned, earlier first;
* ``score = 0.5 * coverage + 0.3 * exclusion + 0.2 * order``; ``is_correct`` iff ``score >= 0.8``.
* An empty reply is unscored.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._digest import check_items, render_calendar, render_tasks, score_briefing
from pytest_jeval.benchmarks._usecase import summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer

PROMPT = """You are the assistant of {person}.
Write {first}'s digest for {weekday} {date}: what {first} must attend and do today.

Include every confirmed meeting on {date}, in time order, the requests addressed to {first} that need action today,
and {first}'s open tasks due today. Leave out cancelled meetings, entries for other days, messages and tasks meant
for other people, and tasks that are already done.

Calendar:
{calendar}

Messages:
{messages}

Tasks:
{tasks}

Write the digest as a short plain-text list. Name each meeting and task by its title."""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One day's inputs with the digest's required items and distractors."""
    required = check_items(row["id"], row["required"], timed=True)
    distractors = check_items(row["id"], row["distractors"], timed=False)
    if not required:
        raise ValueError(f"{row['id']}: a digest needs at least one required item")
    return Sample(
        id=row["id"],
        input=f"{row['person']}, {row['weekday']} {row['date']}",
        target=row["reference"],
        subject=row["subject"],
        metadata={
            "person": row["person"], "date": row["date"], "weekday": row["weekday"],
            "calendar": [dict(c) for c in row["calendar"]], "messages": [dict(m) for m in row["messages"]],
            "tasks": [dict(t) for t in row["tasks"]], "required": required, "distractors": distractors,
        },
    )


def prompt(sample: Sample) -> str:
    """The day's calendar, messages and tasks as structured text, and what the digest must hold."""
    m = sample.metadata
    messages = "\n".join(f"- {x['time']} from {x['from']} to {x['to']}: \"{x['text']}\"" for x in m["messages"])
    return PROMPT.format(person=m["person"], first=m["person"].split()[0], weekday=m["weekday"], date=m["date"],
                         calendar=render_calendar(m["calendar"]), messages=messages or "(none)",
                         tasks=render_tasks(m["tasks"]))


def score_digest(reply: str, sample: Sample) -> Score:
    """Composite of coverage (0.5), exclusion (0.3) and time order (0.2); correct iff >= 0.8."""
    return score_briefing(reply, sample)


BENCHMARK = Benchmark(
    name="daily_digest",
    category="use-case",
    description="Daily digest from calendar, messages and tasks: required items, no wrong ones, in time order",
    bundled_files=("data/daily_digest.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="daily_digest",
    scoring="composite: 0.5 required items + 0.3 distractors absent + 0.2 time order; correct >= 0.8",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_daily_digest(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold."""
    score(score_digest(response.text, sample))


@register_scorer("daily_digest", needs_sample=True)
def record_daily_digest(record: dict[str, Any], sample: Sample) -> Score:
    """daily_digest: required items, distractors absent, time order."""

    result: Score = score_digest(answer_of(record), sample)
    return result
