"""DeepPlanning travel's plan: the agent writes it in upstream's Markdown format inside ``<plan></plan>``;
the suite's ``[judge]`` converts it to upstream's JSON (as upstream's ``convert_report.py`` has an LLM do),
and the constraint checks read the JSON.

The prompts are the project's wording of upstream's (``SYSTEM_PROMPT_EN`` and ``FORMAT_CONVERT_PROMPT_EN``):
the same workflow, line formats, rules and JSON schema.
"""

from __future__ import annotations

import json
import re
from typing import Any

SYSTEM = """You are an expert travel planner. Make a complete, executable and rigorous travel plan for the user's \
request, which is complete: do not ask the user anything and do not ask for confirmation.

Phase 1, collect information with the tools. Everything in the plan (flights, trains, hotels, attractions, \
restaurants, routes, prices, names, times) must come from tool results, with names exactly as the tools return them.

Phase 2, write the final plan inside <plan></plan>, day by day:

Day N:
Current City: <a city, or "from A to B" on a travel day>
Accommodation: <hotel name>, <price, e.g. ¥400/room/night>   ("-" on the last day)
HH:MM-HH:MM | travel_intercity_public | <flight/train> <number>, <departure station> - <arrival station>, \
<price per person>
HH:MM-HH:MM | travel_city | <from> - <to>, <distance>, <duration>, <price per taxi>
HH:MM-HH:MM | attraction | <attraction name>, <ticket price per person>
HH:MM-HH:MM | meal | <Lunch/Dinner>, <restaurant name>, <price per person>
HH:MM-HH:MM | hotel | <Check-in/Check-out/Rest>, <hotel name>
HH:MM-HH:MM | buffer | <description>

Then a budget summary: Transportation, Accommodation, Meals, Attractions & Tickets, Other and Total Estimated \
Budget, each in RMB.

Rules the plan is checked against: the trip is a loop from the origin and back, with an intercity ride on each \
travel day; activities follow one another without gaps or overlaps (buffers fill waiting), a city ride takes the \
queried time (within 5 minutes), intercity rides their scheduled times; meals (no breakfast) last 1-2 hours, at \
least 2 hours apart, within the restaurant's hours; a day in one city has lunch and dinner and at least 2 \
attractions or 4 hours of sightseeing; arriving before 10:00 two meals, 10:00-15:00 at least one, later at most \
one; leaving before 9:00 no meal, 9:00-15:00 at most one, later at least one; arriving before 12:00 or leaving \
after 16:00, at least one attraction; attractions within their opening hours, not on their closing days, for \
their minimum to maximum visit hours; no restaurant or attraction twice; every day but the last ends at the hotel; \
prices exactly as queried; the total is the sum of all costs (intercity fares, tickets and meals per person, \
rooms per night, taxis per four people) and within the user's budget."""

CONVERT = """You are a parser. Convert the travel plan you are given (Markdown: a budget summary and days with \
"Current City:", "Accommodation:" and lines "HH:MM-HH:MM | type | details") into one JSON object, exactly and \
without adding anything, wrapped in <JSON></JSON>. Schema:
{"budget_summary": {"transportation": number, "accommodation": number, "meals": number, \
"attractions_and_tickets": number, "other": number, "total_estimated_budget": number, "currency": string},
 "daily_plans": [{"day_number": number, "current_city": string, "accommodation": {"name": string, \
"price_per_night": number}, "activities": [{"time_slot": "HH:MM-HH:MM", "type": string, "details": {...}}]}]}
Leave "accommodation" out of a day whose Accommodation is "-". Prices are plain numbers (¥650/person -> 650); \
"A - B" routes become "from" and "to". details by type:
travel_intercity_public: {"mode": "flight" or "train", "number", "from", "to", "cost"}
travel_city: {"from", "to", "distance", "duration", "cost"}
attraction: {"name", "city", "cost"}
meal: {"meal_type", "name", "cost"}
hotel: {"activity", "name"}
buffer: {"description"}"""


def extract_plan(text: str) -> str:
    """The plan inside ``<plan></plan>`` (after the last ``</think>``; several blocks joined), or ``""``."""
    if not text:
        return ""
    ends = list(re.finditer(r"</think>", text, flags=re.IGNORECASE))
    if ends:
        text = text[ends[-1].end():]
    blocks = [m.strip() for m in re.findall(r"<plan>(.*?)</plan>", text, flags=re.DOTALL | re.IGNORECASE)]
    return "\n\n".join(b for b in blocks if b)


class ConversionError(ValueError):
    """The converter's reply holds no JSON plan."""


def parse_conversion(reply: str) -> dict[str, Any]:
    """The JSON object of the converter's reply (inside ``<JSON></JSON>``, else the whole reply)."""
    found = re.search(r"<JSON>([\s\S]*?)</JSON>", reply or "")
    payload = found.group(1).strip() if found else (reply or "").strip()
    fenced = re.fullmatch(r"```(?:json)?\s*([\s\S]*?)\s*```", payload)
    payload = fenced.group(1) if fenced else payload
    try:
        plan = json.loads(payload)
    except ValueError as exc:
        raise ConversionError(f"the converter's reply is not JSON: {exc}") from None
    if not isinstance(plan, dict):
        raise ConversionError("the converter's reply is not a JSON object")
    return plan


def conversion_messages(plan_text: str) -> list[dict[str, str]]:
    """The converter's request: its instructions, then the plan."""
    return [{"role": "system", "content": CONVERT}, {"role": "user", "content": plan_text}]
