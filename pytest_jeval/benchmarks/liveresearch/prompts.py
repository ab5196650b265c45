"""pytest-jeval's own wording of RACE's two judge prompts, used only when the clone lacks upstream's ``prompt/``.

They ask for what upstream's prompts ask for (the same placeholders and the same output: per dimension, one
``{"criterion", "analysis", "article_1_score", "article_2_score"}`` per criterion, scores 0-10; the cleaned article
in full), in words written for this project. A record scored with them says so (``judge_prompts``), since scores
from other wording are not comparable with upstream's.
"""

from __future__ import annotations

SCORE = """You are a strict and objective evaluator of research reports. Two reports were written for the same deep \
research task. Compare them criterion by criterion and score each report on every criterion from 0 to 10 \
(fractions allowed): 0-2 fails the criterion, 2-4 poor, 4-6 average, 6-8 good, 8-10 excellent.

<task>
"{task_prompt}"
</task>

<article_1>
"{article_1}"
</article_1>

<article_2>
"{article_2}"
</article_2>

The criteria, by dimension (comprehensiveness, insight, instruction_following, readability), each with what it means:

<criteria_list>
{criteria_list}
</criteria_list>

Answer with one JSON object and nothing else. It has one key per dimension; each holds a list with one entry per \
criterion of that dimension, in the order given:
{{"comprehensiveness": [{{"criterion": "<the criterion's text, as given>", "analysis": "<a short comparison>", \
"article_1_score": <0-10>, "article_2_score": <0-10>}}, ...], "insight": [...], "instruction_following": [...], \
"readability": [...]}}
"""
"""The scoring prompt: ``task_prompt``, ``article_1`` (the report under test), ``article_2`` (the reference),
``criteria_list`` (:func:`~pytest_jeval.benchmarks.liveresearch.race.criteria_for_prompt`)."""

CLEAN = """Edit the research article below: remove every citation link, citation mark (such as [1] or [2]), \
reference list and footnote, keeping all its other content as it is and the text fluent. Where a citation mark's \
words are part of a sentence, keep the words and drop only the mark.

Article:
"{article}"

Return the whole edited article and nothing else.
"""
"""The cleaning prompt: ``article``."""
