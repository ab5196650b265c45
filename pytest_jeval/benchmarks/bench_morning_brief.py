"""morning_brief: brief someone on the morning ahead (meetings, travel, weather, tasks) within a word limit.

Synthetic, shipped as ``data/morning_brief.jsonl`` (30 invented mornings). Schema: ``id``,
``subject`` (today's weather / the way to work), ``person``, ``date``, ``weekday``, ``now``
(the time the brief is read), ``calendar`` (``[{date, start, end, title, with, place,
status}]``), ``travel`` (``[{from, to, route, mode, minutes, arrive_by}]``), ``weather``
(``[{day, text}]`` for today and tomorrow), ``tasks`` (``[{title, owner, due, priority,
status}]``), ``required`` and ``distractors`` as in daily_digest (required: the morning's
meetings and when to leave, timed, today's weather and the task due this morning;
distractors: a cancelled meeting, an afternoon meeting, tomorrow's meeting and weather, a
task already done), ``max_words`` (the length limit) and ``reference`` (a gold brief).

Scoring: daily_digest's composite (:mod:`pytest_jeval.benchmarks._digest`:
``0.5 * coverage + 0.3 * exclusion + 0.2 * order``) times a length factor: 1.0 up to
``max_words`` words (whitespace-separated, after any reasoning block), falling linearly to
0 at twice the limit. ``is_correct`` iff the score is ``>= 0.8`` and the brief is within
the limit. An empty reply is unscored.
"""

from __future__ import annotations

from typing import Any

from pytest_jeval import Benchmark, LoadContext, Reply, Sample, Score
from pytest_jeval.benchmarks._digest import check_items, render_calendar, render_tasks, score_briefing
from pytest_jeval.benchmarks._usecase import summarize_composite
from pytest_jeval.scoring.registry import answer_of, register_scorer

PROMPT = """You are the assistant of {person}. It is {now} on {weekday} {date}.
Write {first}'s brief for this morning (until 12:00).

Include, in time order, when {first} has to leave and every confirmed meeting this morning, then today's weather
and the tasks due this morning. Leave out cancelled meetings, anything after 12:00 or on another day, and tasks
that are already done.

Calendar:
{calendar}

Travel:
{travel}

Weather:
{weather}

Tasks:
{tasks}

Keep the brief under {max_words} words. Name each meeting and task by its title."""


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One morning's inputs with the brief's required items, distractors and word limit."""
    required = check_items(row["id"], row["required"], timed=True)
    distractors = check_items(row["id"], row["distractors"], timed=False)
    max_words = int(row["max_words"])
    if not required or max_words < 1:
        raise ValueError(f"{row['id']}: a brief needs a required item and a positive max_words")
    return Sample(
        id=row["id"],
        input=f"{row['person']}, {row['weekday']} {row['date']} {row['now']}",
        target=row["reference"],
        subject=row["subject"],
        metadata={
            "person": row["person"], "date": row["date"], "weekday": row["weekday"], "now": row["now"],
            "calendar": [dict(c) for c in row["calendar"]], "travel": [dict(t) for t in row["travel"]],
            "weather": [dict(w) for w in row["weather"]], "tasks": [dict(t) for t in row["tasks"]],
            "required": required, "distractors": distractors, "max_words": max_words,
        },
    )


def prompt(sample: Sample) -> str:
    """The morning's calendar, travel, weather and tasks as structured text, with the word limit."""
    m = sample.metadata
    travel = "\n".join(f"- {t['from']} -> {t['to']}: {t['route']} ({t['mode']}, {t['minutes']} min); "
                       f"arrive by {t['arrive_by']}" for t in m["travel"])
    weather = "\n".join(f"- {w['day']}: {w['text']}" for w in m["weather"])
    return PROMPT.format(person=m["person"], first=m["person"].split()[0], now=m["now"], weekday=m["weekday"],
                         date=m["date"], calendar=render_calendar(m["calendar"]), travel=travel or "(none)",
                         weather=weather or "(none)", tasks=render_tasks(m["tasks"]), max_words=m["max_words"])


def score_brief(reply: str, sample: Sample) -> Score:
    """daily_digest's composite times the length factor; correct iff >= 0.8 and within ``max_words``."""
    return score_briefing(reply, sample, max_words=sample.metadata["max_words"])


BENCHMARK = Benchmark(
    name="morning_brief",
    category="use-case",
    description="Morning brief (meetings, travel, weather, tasks) within a word limit",
    bundled_files=("data/morning_brief.jsonl",),
    to_sample=to_sample,
    prompt=prompt,
    scorer="morning_brief",
    scoring="daily_digest's composite x length factor (1 up to max_words, 0 at twice); correct >= 0.8, within limit",
    sample_count=30,
    summarize_extra=summarize_composite,
)


def test_morning_brief(sample: Sample, response: Reply, score: Any) -> None:
    """Correct iff the composite score reaches the threshold and the brief is within the word limit."""
    score(score_brief(response.text, sample))


@register_scorer("morning_brief", needs_sample=True)
def record_morning_brief(record: dict[str, Any], sample: Sample) -> Score:
    """morning_brief: daily_digest's composite times the length factor."""

    result: Score = score_brief(answer_of(record), sample)
    return result
