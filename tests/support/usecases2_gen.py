"""The generator of the bundled data of daily_digest, morning_brief, research_mining and knowledge_base.

Deterministic (one ``random.Random`` per item, seeded by the item number), over invented
people, projects, compounds and offices, so world knowledge cannot stand in for reading.
Rewrite the four files with::

    .venv/bin/python tests/support/usecases2_gen.py

``tests/acceptance/test_usecases_briefings.py`` checks that the committed files are exactly this output.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "pytest_jeval" / "benchmarks" / "data"
N_ITEMS = 30

PEOPLE = [
    "Priya Natarajan", "Odile Varga", "Dmitri Halvorsen", "Marco Ellery", "Ines Okafor", "Tobias Wrenfield",
    "Yuki Castellan", "Amara Lindqvist", "Felix Osei", "Rosalind Pike", "Hamid Sarrow", "Lena Brightwater",
    "Caspar Mbeki", "Noor Fairweather", "Jonas Telford", "Beatriz Quayle", "Soren Achebe", "Mirela Stanhope",
    "Gideon Farrow", "Talia Oyelaran", "Anselm Corvo", "Keziah Marlow", "Rafael Insley", "Vesna Holloway",
    "Otto Renwick", "Zainab Calder", "Lucian Moss", "Freya Okonkwo", "Emeric Dalby", "Hana Wexford",
]
CODEWORDS = [
    "Marrowfield", "Quillfeather", "Brackenridge", "Tessaly", "Orlinde", "Calloway", "Fennick", "Orbison",
    "Pelham", "Ridley", "Harbourline", "Wendover", "Ashgrove", "Corrimal", "Duskwater", "Everholt",
    "Foxmere", "Glenarvon", "Hollowmere", "Ironvale", "Juniper Row", "Kelderby", "Larkspire", "Mossbank",
    "Northwyck", "Oakhurst", "Pennisford", "Quarrybrook", "Rookhaven", "Saltmarsh", "Thistlewood", "Umberleigh",
    "Valemont", "Westerling", "Yarrowby", "Zephyrine", "Amberlea", "Bramblecote", "Coldharbour", "Dunmorrow",
    "Elderwick", "Fairhollow", "Greystoke", "Hartwell", "Ivybridge", "Kingsmere", "Lindenfold", "Merriton",
]
ACTIVITIES = [
    "budget review", "design critique", "hiring debrief", "vendor call", "quarterly planning", "customer onboarding",
    "safety walkthrough", "contract negotiation", "roadmap sync", "press briefing", "user interview", "sprint retro",
    "board prep", "site visit", "training session", "pricing workshop", "audit interview", "launch rehearsal",
    "partner check-in", "data governance forum", "supplier visit", "grant panel", "townhall rehearsal", "lab tour",
]
TASKS = [
    "expense report", "slide deck", "grant application", "purchase order", "release notes", "insurance claim",
    "reference letter", "seating plan", "risk assessment", "travel booking", "tender response", "style guide",
    "timesheet", "vendor survey", "floor plan", "press release", "payroll export", "inventory sheet",
]
DOCUMENTS = [
    "signed lease", "shipping manifest", "photo release", "risk register", "site drawings", "cost estimate",
    "meeting minutes", "test report", "safety certificate", "donor list",
]
TASK_VERBS = {"expense report": "Submit", "slide deck": "Finish", "grant application": "Send off",
              "purchase order": "Approve", "release notes": "Publish", "insurance claim": "File",
              "reference letter": "Write", "seating plan": "Finalise", "risk assessment": "Sign off",
              "travel booking": "Confirm", "tender response": "Submit", "style guide": "Review",
              "timesheet": "Submit", "vendor survey": "Complete", "floor plan": "Approve",
              "press release": "Proofread", "payroll export": "Run", "inventory sheet": "Update"}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]


def hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def words_unique(items: list[dict[str, Any]]) -> None:
    """No phrase of one item occurs (as words) inside a phrase of another item."""
    phrases = [(i, p.lower()) for i, it in enumerate(items) for p in it["phrases"]]
    for i, a in phrases:
        for j, b in phrases:
            if i != j and f" {a} " in f" {b} ":
                raise AssertionError(f"phrase {a!r} of item {i} occurs in {b!r} of item {j}")


# --------------------------------------------------------------------------- daily_digest


def digest_item(n: int) -> dict[str, Any]:
    rng = random.Random(1000 + n)
    person = PEOPLE[n % len(PEOPLE)]
    others = rng.sample([p for p in PEOPLE if p != person], 8)
    codes = rng.sample(CODEWORDS, 12)
    acts = rng.sample(ACTIVITIES, 6)
    tasks = rng.sample(TASKS, 5)
    doc = rng.choice(DOCUMENTS)
    day = 2 + n % 5
    date = f"{day + 7 * (n % 3)} March 2026"  # 2 March 2026 is a Monday; no ISO dates (Arrow would parse them)
    weekday = WEEKDAYS[(day - 2) % 5]
    tomorrow = f"{day + 7 * (n % 3) + 1} March 2026"
    n_meet = 3 + n % 2
    starts = sorted(rng.sample(range(8 * 4, 17 * 4), n_meet + 1))
    starts = [s * 15 for s in starts]
    calendar: list[dict[str, Any]] = []
    required: list[dict[str, Any]] = []
    distractors: list[dict[str, Any]] = []
    cancelled_at = rng.randrange(n_meet + 1)
    k = 0
    for i, start in enumerate(starts):
        code, act, who = codes[i], acts[i], others[i]
        entry = {"date": date, "start": hhmm(start), "end": hhmm(start + rng.choice([30, 45, 60])),
                 "title": f"{code} {act}", "with": who, "status": "confirmed"}
        if i == cancelled_at:
            entry["status"] = "cancelled"
            distractors.append({"key": f"{code} {act} (cancelled)", "phrases": [code, act], "reason": "cancelled"})
        else:
            required.append({"key": f"{hhmm(start)} {code} {act} with {who}", "phrases": [code, act],
                             "time": hhmm(start), "kind": "meeting"})
        calendar.append(entry)
        k = i + 1
    t_code, t_act = codes[k], acts[k]
    t_start = rng.choice(range(9 * 4, 16 * 4)) * 15
    calendar.append({"date": tomorrow, "start": hhmm(t_start), "end": hhmm(t_start + 60), "title": f"{t_code} {t_act}",
                     "with": others[k], "status": "confirmed"})
    distractors.append({"key": f"{t_code} {t_act} (tomorrow)", "phrases": [t_code, t_act], "reason": "another day"})
    rng.shuffle(calendar)
    # messages: one asks the person for something today, one is meant for a colleague
    m_code = codes[k + 1]
    due = hhmm(rng.choice([11, 12, 13, 15]) * 60)
    asker, colleague = others[5], others[6]
    messages = [
        {"time": hhmm(rng.choice(range(7 * 60, 8 * 60 + 30, 5))), "from": asker, "to": person,
         "text": f"Hi {person.split()[0]}, could you send me the {m_code} {doc} by {due} today? Thanks!"},
    ]
    required.append({"key": f"send the {m_code} {doc} to {asker} by {due}", "phrases": [m_code, doc], "time": "",
                     "kind": "message"})
    o_code, o_task = codes[k + 2], tasks[4]
    messages.append({"time": hhmm(rng.choice(range(7 * 60, 9 * 60, 5))), "from": asker, "to": colleague,
                     "text": f"{colleague.split()[0]}, please handle the {o_code} {o_task} this week; no rush."})
    distractors.append({"key": f"{o_code} {o_task} (for {colleague})", "phrases": [o_code, o_task],
                        "reason": "another person"})
    rng.shuffle(messages)
    todo: list[dict[str, Any]] = []
    priorities = ["high", "normal"]
    for j in range(2):
        code, task = codes[k + 3 + j], tasks[j]
        tdue = hhmm(rng.choice([12, 14, 16, 17, 18]) * 60)
        todo.append({"title": f"{TASK_VERBS[task]} the {code} {task}", "owner": person, "due": f"{date} {tdue}",
                     "priority": priorities[j], "status": "open"})
        required.append({"key": f"{TASK_VERBS[task].lower()} the {code} {task} (due {tdue}, {priorities[j]})",
                         "phrases": [code, task], "time": "", "kind": "task"})
    d_code, d_task = codes[k + 5], tasks[2]
    todo.append({"title": f"{TASK_VERBS[d_task]} the {d_code} {d_task}", "owner": person, "due": f"{date} 10:00",
                 "priority": "high", "status": "done"})
    distractors.append({"key": f"{d_code} {d_task} (done)", "phrases": [d_code, d_task], "reason": "done"})
    if n % 2 == 0:
        p_code, p_task = codes[k + 6], tasks[3]
        todo.append({"title": f"{TASK_VERBS[p_task]} the {p_code} {p_task}", "owner": others[7],
                     "due": f"{date} 15:00", "priority": "high", "status": "open"})
        distractors.append({"key": f"{p_code} {p_task} (owned by {others[7]})", "phrases": [p_code, p_task],
                            "reason": "another person"})
    else:
        p_code, p_task = codes[k + 6], tasks[3]
        todo.append({"title": f"{TASK_VERBS[p_task]} the {p_code} {p_task}", "owner": person,
                     "due": f"{10 + n % 15} April 2026 17:00", "priority": "normal", "status": "open"})
        distractors.append({"key": f"{p_code} {p_task} (due next month)", "phrases": [p_code, p_task],
                            "reason": "another day"})
    rng.shuffle(todo)
    words_unique(required + distractors)
    meetings = sorted((r for r in required if r["kind"] == "meeting"), key=lambda r: r["time"])
    lines = [f"Digest for {weekday} {date} ({person})", "", "Schedule:"]
    lines += [f"- {r['key']}" for r in meetings]
    lines += ["", "Action items:"]
    lines += [f"- {r['key'][0].upper()}{r['key'][1:]}" for r in required if r["kind"] != "meeting"]
    return {"id": f"dd-{n + 1:02d}", "subject": f"{n_meet} meetings",
            "person": person, "date": date, "weekday": weekday, "calendar": calendar, "messages": messages,
            "tasks": todo, "required": required, "distractors": distractors, "reference": "\n".join(lines)}


# --------------------------------------------------------------------------- morning_brief

WEATHER = {
    "rain": ("Light rain from {a} until about {b}, {t} degrees.", ["rain", "umbrella", "showers", "drizzle"]),
    "fog": ("Dense fog until {b}, visibility under 200 metres, {t} degrees.", ["fog", "foggy", "mist"]),
    "wind": ("Strong gusts up to 70 km/h between {a} and {b}, {t} degrees.", ["gusts", "gusty", "windy", "gale"]),
    "snow": ("Snow flurries expected from {a}, about 3 cm by {b}, {t} degrees.", ["snow", "snowfall", "snowy"]),
    "heat": ("Hot and sunny, {t} degrees by {b}; UV index very high.", ["heat", "hot", "sunscreen", "heatwave"]),
    "frost": ("Hard frost overnight, icy pavements until {b}, {t} degrees.", ["frost", "icy", "freezing"]),
}
TEMPS = {"rain": (6, 14), "fog": (3, 9), "wind": (8, 15), "snow": (-4, 0), "heat": (29, 35), "frost": (-6, -1)}
MODES = [("tram", "Line {x} tram via {r}"), ("bus", "the {x} bus via {r}"), ("bike", "the cycle path along {r}"),
         ("car", "the ring road past {r}"), ("train", "the {x}:{y} regional train via {r}")]


def brief_item(n: int) -> dict[str, Any]:
    rng = random.Random(5000 + n)
    person = PEOPLE[(n * 7) % len(PEOPLE)]
    others = rng.sample([p for p in PEOPLE if p != person], 6)
    codes = rng.sample(CODEWORDS, 10)
    acts = rng.sample(ACTIVITIES, 6)
    task = rng.choice(TASKS)
    day = 6 + (n * 3) % 5
    date = f"{day + 7 * (n % 3)} April 2026"  # 6 April 2026 is a Monday
    weekday = WEEKDAYS[(day - 6) % 5]
    tomorrow = f"{day + 7 * (n % 3) + 1} April 2026"
    now = rng.choice([6 * 60 + 30, 6 * 60 + 45, 7 * 60])
    slots = sorted(rng.sample(range(34, 47), 3))  # 08:30 .. 11:30 in quarter hours
    starts = [s * 15 for s in slots]
    office, route = codes[8], codes[9]
    mode, pattern = MODES[n % len(MODES)]
    minutes = rng.choice([20, 25, 30, 35, 40, 45])
    leave = starts[0] - minutes - 10
    calendar: list[dict[str, Any]] = []
    required: list[dict[str, Any]] = [
        {"key": f"leave at {hhmm(leave)} for the {office} office ({minutes} min by {mode})",
         "phrases": ["leave", "depart", "set off", "head out"], "time": hhmm(leave), "kind": "travel"},
    ]
    distractors: list[dict[str, Any]] = []
    for i, start in enumerate(starts):
        calendar.append({"date": date, "start": hhmm(start), "end": hhmm(start + 30), "title": f"{codes[i]} {acts[i]}",
                         "with": others[i], "place": f"{office} office", "status": "confirmed"})
        required.append({"key": f"{hhmm(start)} {codes[i]} {acts[i]} with {others[i]}", "phrases": [codes[i], acts[i]],
                         "time": hhmm(start), "kind": "meeting"})
    c_start = rng.choice([s for s in range(34 * 15, 47 * 15, 15) if s not in starts])
    calendar.append({"date": date, "start": hhmm(c_start), "end": hhmm(c_start + 30), "title": f"{codes[3]} {acts[3]}",
                     "with": others[3], "place": f"{office} office", "status": "cancelled"})
    distractors.append({"key": f"{codes[3]} {acts[3]} (cancelled)", "phrases": [codes[3], acts[3]],
                        "reason": "cancelled"})
    a_start = rng.choice(range(13 * 4, 17 * 4)) * 15
    calendar.append({"date": date, "start": hhmm(a_start), "end": hhmm(a_start + 60), "title": f"{codes[4]} {acts[4]}",
                     "with": others[4], "place": f"{office} office", "status": "confirmed"})
    distractors.append({"key": f"{codes[4]} {acts[4]} (afternoon)", "phrases": [codes[4], acts[4]],
                        "reason": "outside the morning"})
    t_start = rng.choice(range(34, 46)) * 15
    calendar.append({"date": tomorrow, "start": hhmm(t_start), "end": hhmm(t_start + 30),
                     "title": f"{codes[5]} {acts[5]}", "with": others[5], "place": f"{office} office",
                     "status": "confirmed"})
    distractors.append({"key": f"{codes[5]} {acts[5]} (tomorrow)", "phrases": [codes[5], acts[5]],
                        "reason": "another day"})
    rng.shuffle(calendar)
    today_w, tomorrow_w = rng.sample(sorted(WEATHER), 2)
    lo, hi = TEMPS[today_w]
    text = WEATHER[today_w][0].format(a=hhmm(rng.choice([7, 8, 9]) * 60), b=hhmm(rng.choice([10, 11, 12]) * 60),
                                      t=rng.randint(lo, hi))
    lo2, hi2 = TEMPS[tomorrow_w]
    text2 = WEATHER[tomorrow_w][0].format(a=hhmm(rng.choice([7, 8, 9]) * 60), b=hhmm(rng.choice([10, 11, 12]) * 60),
                                          t=rng.randint(lo2, hi2))
    weather = [{"day": "today", "text": text}, {"day": "tomorrow", "text": text2}]
    required.append({"key": f"weather: {text}", "phrases": WEATHER[today_w][1], "time": "", "kind": "weather"})
    distractors.append({"key": f"tomorrow's weather ({tomorrow_w})", "phrases": WEATHER[tomorrow_w][1],
                        "reason": "another day"})
    travel = [{"from": "home", "to": f"{office} office",
               "route": pattern.format(x=rng.randint(2, 19), y=f"{rng.choice([5, 20, 35, 50]):02d}", r=route),
               "mode": mode, "minutes": minutes, "arrive_by": hhmm(starts[0] - 10)}]
    t_code = codes[6]
    tasks = [{"title": f"{TASK_VERBS[task]} the {t_code} {task}", "owner": person, "due": f"{date} {hhmm(starts[1])}",
              "priority": "high", "status": "open"},
             {"title": f"Book the {codes[7]} {rng.choice(DOCUMENTS)} courier", "owner": person,
              "due": f"{date} 09:00", "priority": "normal", "status": "done"}]
    required.append({"key": f"{TASK_VERBS[task].lower()} the {t_code} {task} before {hhmm(starts[1])}",
                     "phrases": [t_code, task], "time": "", "kind": "task"})
    distractors.append({"key": f"{codes[7]} courier (done)", "phrases": [codes[7], "courier"], "reason": "done"})
    rng.shuffle(tasks)
    words_unique(required + distractors)
    timed = sorted((r for r in required if r["time"]), key=lambda r: r["time"])
    lines = [f"Morning brief for {weekday} {date} ({person}):"]
    lines += [f"- {r['key'][0].upper()}{r['key'][1:]}" for r in timed]
    lines += [f"- {r['key'][0].upper()}{r['key'][1:]}" for r in required if not r["time"]]
    reference = "\n".join(lines)
    max_words = 120
    if len(reference.split()) > max_words:
        raise AssertionError(f"mb-{n + 1:02d}: the reference brief is over {max_words} words")
    return {"id": f"mb-{n + 1:02d}", "subject": f"{today_w} / {mode}", "person": person, "date": date,
            "weekday": weekday, "now": hhmm(now), "calendar": calendar, "travel": travel, "weather": weather,
            "tasks": tasks, "required": required, "distractors": distractors,
            "max_words": max_words, "reference": reference}


def check_briefing(row: dict[str, Any], kind: str) -> None:
    """The reference mentions every required item, in time order, and no distractor (and fits the limit)."""
    from pytest_jeval.benchmarks._digest import check_items, first_mention
    from pytest_jeval.scoring.text import normalize_text

    tokens = normalize_text(row["reference"]).split()
    for item in check_items(row["id"], row["required"], timed=True):
        assert first_mention(tokens, item["phrases"]) is not None, (row["id"], item["key"])
    for item in check_items(row["id"], row["distractors"], timed=False):
        assert first_mention(tokens, item["phrases"]) is None, (row["id"], item["key"])
    if kind == "morning_brief":
        assert len(row["reference"].split()) <= row["max_words"], row["id"]


# --------------------------------------------------------------------------- research_mining

COMPOUNDS = ["velarin", "ostrazine", "tamproxil", "quenolide", "barimectin", "sorvatide", "lumicrase", "dextrafol",
             "pyrenoxin", "calvanil", "moxiferol", "trelamide", "zibrotin", "fennazole", "gorumycin", "hesperane"]
#: (subjects, what a trial treats: units, the word for them, outcomes, side effects)
GROUPS = [
    (["Corwen wheat", "Vashti barley", "Orrin lettuce", "Marisol tomato vines", "Selwyn apple orchards",
      "Brisa coffee shrubs", "Ulwen pine seedlings", "Quorra rice paddies"], "plots", "plants",
     [("leaf blight", ["leaf blight", "blight"]), ("root rot", ["root rot"]), ("aphid damage", ["aphid", "aphids"]),
      ("fungal spore counts", ["spore", "spores"]), ("bark canker", ["canker", "cankers"]),
      ("mite infestation", ["mite", "mites"])],
     [("water use", ["water use", "water consumption"]), ("leaf yellowing", ["yellowing", "yellow"]),
      ("flowering delay", ["flowering"]), ("earthworm losses", ["earthworm", "earthworms"])]),
    (["Halbeck trout", "Ketterly oysters", "Pallister sheep", "Tamsin dairy goats", "Dunstable honeybees",
      "Lorimer carp"], "pens", "animals",
     [("gill parasite load", ["gill parasite", "parasite load", "parasites"]), ("hoof lesions", ["hoof lesion", "hoof lesions", "lesions"]),
      ("mite infestation", ["mite", "mites"]), ("winter losses", ["winter losses", "winter loss"]),
      ("shell thinning", ["shell thinning"])],
     [("feed intake", ["feed intake"]), ("heat stress", ["heat stress"]), ("weight loss", ["weight loss"]),
      ("water use", ["water use", "water consumption"])]),
]


def research_item(n: int) -> dict[str, Any]:
    rng = random.Random(9000 + n)
    comp, comp2 = rng.sample(COMPOUNDS, 2)
    systems, units, beings, outcomes, side_effects = GROUPS[n % 2]
    system, system2 = rng.sample(systems, 2)
    (o1, o1_keys), (o2, o2_keys) = rng.choice(outcomes), rng.choice(side_effects)
    p1, p2, pd, months, p_other = rng.sample(range(13, 79), 5)  # none equals a week count
    plots, weeks, n2 = rng.randint(120, 480), rng.choice([6, 8, 10, 12]), rng.randint(120, 480)
    Comp = comp.capitalize()
    abstracts: list[tuple[str, str, str]] = [
        ("s1", f"Field trial of {comp} against {o1} in {system}",
         f"We treated {plots} {units} of {system} with {comp} for {weeks} weeks. Compared with untreated controls, "
         f"{comp} reduced {o1} by {p1} percent."),
        ("s2", f"Side effects of {comp} in {system}",
         f"In a controlled study of {system}, {beings} given {comp} showed {p2} percent more {o2} than "
         f"controls over the same period."),
    ]
    claims: list[dict[str, Any]] = [{"claim": f"{Comp} reduced {o1} in {system} by {p1} percent.", "keys": [o1_keys, [str(p1)]],
               "support": ["s1"]},
              {"claim": f"{Comp} increased {o2} in {system} by {p2} percent.", "keys": [o2_keys, [str(p2)]],
               "support": ["s2"]}]
    kind = ["replicated", "persistence", "two claims"][n % 3]
    if kind == "replicated":
        abstracts.append(("s3", f"A second-site replication with {comp} in {system}",
                          f"At a second site, {n2} further {units} of {system} received {comp}; {o1} again fell by "
                          f"{p1} percent relative to controls."))
        claims[0]["support"] = ["s1", "s3"]
    elif kind == "persistence":
        abstracts.append(("s3", f"Long-term follow-up of {comp} treatment in {system}",
                          f"Following {system} after the last {comp} treatment, the lower {o1} level persisted for "
                          f"{months} months before returning to baseline."))
        claims.append({"claim": f"The effect of {comp} on {o1} in {system} persisted for {months} months.",
                       "keys": [o1_keys, [str(months)], ["month", "months"]], "support": ["s3"]})
    abstracts += [
        ("d1", f"{Comp} in {system2}", f"In {system2}, {comp} reduced {o1} by {pd} percent over {weeks} weeks "
                                       f"({n2} {units})."),
        ("d2", f"{comp2.capitalize()} trial in {system}", f"{comp2.capitalize()} had no measurable effect on {o1} "
                                                         f"in {system} across {plots + 17} {units}."),
        ("d3", f"Imaging methods for {system}", f"We describe a drone imaging protocol that estimates the condition "
                                                f"of {system} with {p_other} percent less labour than manual survey."),
    ]
    order = list(range(len(abstracts)))
    rng.shuffle(order)
    ids = {abstracts[k][0]: f"A{i + 1}" for i, k in enumerate(order)}
    shown = [{"id": ids[abstracts[k][0]], "title": abstracts[k][1], "text": abstracts[k][2]} for k in order]
    gold = [{"claim": c["claim"], "keys": c["keys"], "support": sorted((ids[s] for s in c["support"]),
                                                                      key=lambda x: int(x[1:]))} for c in claims]
    reference = "\n".join(f"CLAIM: {c['claim']} " + "".join(f"[{s}]" for s in c["support"]) for c in gold)
    question = f"What do these studies report about the effects of {comp} on {system}?"
    return {"id": f"rm-{n + 1:02d}", "subject": kind, "question": question, "abstracts": shown, "claims": gold,
            "reference": reference}


# --------------------------------------------------------------------------- knowledge_base

OFFICES = ["Brannock", "Heronsgate", "Calder Quay", "Mistlehurst", "Ostwick", "Penhallow", "Rydal Cross", "Saffrey",
           "Tolland Mill", "Ulverholm", "Wickmere", "Yelbridge"]
ASSEMBLY = ["the north lawn by the flagpole", "the cycle shelter on Mill Lane", "the east loading bay",
            "the chapel car park", "the tennis courts", "the riverside footpath", "the bus turning circle",
            "the sculpture garden", "the overflow car park", "the front steps of the library",
            "the allotments gate", "the fountain courtyard"]
ASSEMBLY_KEYS = ["north lawn", "cycle shelter", "east loading bay", "chapel car park", "tennis courts",
                 "riverside footpath", "bus turning circle", "sculpture garden", "overflow car park",
                 "library", "allotments", "fountain courtyard"]
AGENCIES = ["Pellucid Travel", "Northstar Journeys", "Caravel Bookings", "Orrery Trips", "Lanthorn Travel",
            "Meridale Tours", "Quayside Voyages", "Tessellate Travel", "Brightway Bookings", "Halcyon Routes",
            "Saltire Journeys", "Voyagier"]
AIDERS = ["Petra Vandermeer", "Idris Pollard", "Cosima Threlkeld", "Bram Oduya", "Wilhelmina Achter", "Desmond Kaur",
          "Ottilie Brande", "Kwame Lestrange", "Signe Harrowgate", "Matteo Quennell", "Ayesha Thornbury", "Ruben Castellane"]
WEEKDAY_FULL = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
KB_FACTS = {
    "facilities": ["manager", "close", "spaces", "car_park"],
    "it": ["ssid", "room", "years", "it_person"],
    "safety": ["assembly", "aider", "drill_day"],
    "travel": ["agency", "allowance", "rate"],
}


def kb_offices() -> list[dict[str, Any]]:
    rng = random.Random(77)
    names = rng.sample(PEOPLE, 24)
    allowances = rng.sample(range(24, 60), 12)
    spaces = rng.sample(range(18, 140), 12)
    rates = rng.sample(range(31, 59), 12)
    rooms = rng.sample(range(101, 399), 12)
    closes = ["16:30", "17:00", "17:30", "18:00", "18:30", "19:00", "16:00", "19:30", "20:00", "15:30", "21:00", "15:00"]
    close_alias = ["4:30 pm", "5 pm", "5:30 pm", "6 pm", "6:30 pm", "7 pm", "4 pm", "7:30 pm", "8 pm", "3:30 pm", "9 pm",
                   "3 pm"]
    out = []
    for i, office in enumerate(OFFICES):
        out.append({
            "office": office, "manager": names[i], "it_person": names[12 + i], "aider": AIDERS[i],
            "close": closes[i], "close_alias": close_alias[i], "spaces": spaces[i],
            "car_park": ["Beech", "Alder", "Rowan", "Hazel", "Cedar", "Larch", "Willow", "Holly", "Elm", "Maple",
                         "Yew", "Poplar"][i],
            "ssid": f"TI-{CODEWORDS[i * 3]}-{rng.randint(2, 9)}", "room": f"{'ABC'[i % 3]}{rooms[i]}",
            "years": [2, 3, 4, 5][i % 4], "assembly": ASSEMBLY[i], "assembly_key": ASSEMBLY_KEYS[i],
            "drill_day": WEEKDAY_FULL[i % 5], "period": ["month", "quarter"][i % 2], "agency": AGENCIES[i],
            "allowance": allowances[i], "rate": rates[i],
        })
    return out


def kb_docs(offices: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, str]]:
    """The collection: one document of each kind per office, ids d1..d48 in a shuffled order."""
    rng = random.Random(78)
    texts: list[tuple[str, str, str, str]] = []
    for o in offices:
        x = o["office"]
        texts += [
            (x, "facilities", f"{x} site: opening hours and parking",
             f"The {x} site of Tarrowby Instruments is managed by {o['manager']}. It opens at 07:30 and closes at "
             f"{o['close']} on weekdays. Visitors park in the {o['car_park']} car park, which has {o['spaces']} spaces."),
            (x, "it", f"{x} site: IT and network",
             f"At {x}, the staff Wi-Fi network is called {o['ssid']}. IT help is given by {o['it_person']} in room "
             f"{o['room']}, and laptops are replaced every {o['years']} years."),
            (x, "safety", f"{x} site: fire safety",
             f"The fire assembly point for {x} is {o['assembly']}. The first-aid officer is {o['aider']}, and fire "
             f"drills take place on the first {o['drill_day']} of every {o['period']}."),
            (x, "travel", f"{x} site: business travel",
             f"Staff based at {x} book business travel through {o['agency']}. The daily meal allowance is "
             f"{o['allowance']} crowns, and private cars are reimbursed at {o['rate']} cents per kilometre."),
        ]
    order = list(range(len(texts)))
    rng.shuffle(order)
    return {(texts[k][0], texts[k][1]): {"id": f"d{i + 1}", "title": texts[k][2], "text": texts[k][3]}
            for i, k in enumerate(order)}


def last(name: str) -> list[str]:
    """A full name and the surname alone."""
    return [name, name.split()[-1]]


def kb_question(o: dict[str, Any], fact: str) -> tuple[str, str, list[str]]:
    x = o["office"]
    return {
        "manager": (f"Who manages the {x} site?", o["manager"], last(o["manager"])),
        "close": (f"At what time does the {x} site close on weekdays?", o["close"], [o["close"], o["close_alias"]]),
        "spaces": (f"How many spaces does the visitor car park at {x} have?", str(o["spaces"]), [str(o["spaces"])]),
        "car_park": (f"Which car park do visitors to {x} use?", f"the {o['car_park']} car park", [o["car_park"]]),
        "ssid": (f"What is the staff Wi-Fi network called at {x}?", o["ssid"], [o["ssid"]]),
        "room": (f"In which room is IT help given at {x}?", o["room"], [o["room"]]),
        "years": (f"How often are laptops replaced at {x}?", f"every {o['years']} years",
                  [f"{o['years']} years", f"{['two', 'three', 'four', 'five'][o['years'] - 2]} years"]),
        "it_person": (f"Who gives IT help at {x}?", o["it_person"], last(o["it_person"])),
        "assembly": (f"Where is the fire assembly point for {x}?", o["assembly"], [o["assembly_key"]]),
        "aider": (f"Who is the first-aid officer at {x}?", o["aider"], last(o["aider"])),
        "drill_day": (f"On which weekday are fire drills held at {x}?", o["drill_day"], [o["drill_day"]]),
        "agency": (f"Which agency do staff at {x} book business travel through?", o["agency"],
                   [o["agency"], o["agency"].split()[0]]),
        "allowance": (f"What is the daily meal allowance for staff at {x}?", f"{o['allowance']} crowns",
                      [str(o["allowance"])]),
        "rate": (f"At what rate are private cars reimbursed for staff at {x}?", f"{o['rate']} cents per kilometre",
                 [str(o["rate"])]),
    }[fact]


KIND_OF = {f: kind for kind, facts in KB_FACTS.items() for f in facts}


def kb_candidates(rng: random.Random, docs: dict[tuple[str, str], dict[str, str]], gold: list[tuple[str, str]],
                  office: str) -> list[dict[str, str]]:
    """8 documents: the gold ones, the same kind at other sites, the same site's other kinds, then any."""
    picked = list(gold)
    kinds = {k for _, k in gold}
    same_kind = [key for key in docs if key[1] in kinds and key not in picked]
    same_site = [key for key in docs if key[0] == office and key not in picked]
    for pool, count in ((same_kind, 3), (same_site, 2)):
        for key in rng.sample(pool, min(count, len(pool))):
            if key not in picked:
                picked.append(key)
    rest = [key for key in docs if key not in picked]
    picked += rng.sample(rest, 8 - len(picked))
    rng.shuffle(picked)
    return [dict(docs[key]) for key in picked]


def kb_items() -> list[dict[str, Any]]:
    offices = kb_offices()
    docs = kb_docs(offices)
    rng = random.Random(79)
    all_facts = [f for facts in KB_FACTS.values() for f in facts]
    rows: list[dict[str, Any]] = []
    for i in range(28):  # look-ups: every fact at least twice, over every site
        o = offices[i % 12]
        fact = all_facts[(i * 5) % len(all_facts)]
        question, answer, aliases = kb_question(o, fact)
        gold = [(o["office"], KIND_OF[fact])]
        rows.append({"subject": "lookup", "question": question, "answer": answer, "aliases": aliases,
                     "answerable": True, "gold": gold, "office": o["office"]})
    hops = [("ssid", "aider"), ("agency", "manager"), ("room", "allowance"), ("assembly", "it_person"),
            ("car_park", "drill_day")]
    for j, (via, fact) in enumerate(hops):
        o = offices[(j * 5 + 2) % 12]
        _, answer, aliases = kb_question(o, fact)
        clue = {"ssid": f"whose staff Wi-Fi network is called {o['ssid']}",
                "agency": f"whose staff book business travel through {o['agency']}",
                "room": f"whose IT help is given in room {o['room']}",
                "assembly": f"whose fire assembly point is {o['assembly']}",
                "car_park": f"whose visitors park in the {o['car_park']} car park"}[via]
        ask = {"aider": "Who is the first-aid officer at the site", "manager": "Who manages the site",
               "allowance": "What is the daily meal allowance at the site",
               "it_person": "Who gives IT help at the site", "drill_day": "On which weekday are fire drills held at the site"}
        rows.append({"subject": "multi-hop", "question": f"{ask[fact]} {clue}?", "answer": answer, "aliases": aliases,
                     "answerable": True, "gold": [(o["office"], KIND_OF[via]), (o["office"], KIND_OF[fact])],
                     "office": o["office"]})
    missing = [("How many bicycle racks does the {x} site have?", "facilities"),
               ("Who is the head of security at {x}?", "safety"),
               ("What is the hotel budget per night for staff at {x}?", "travel")]
    for j, (q, kind) in enumerate(missing):
        o = offices[(j * 4 + 1) % 12]
        rows.append({"subject": "unanswerable", "question": q.format(x=o["office"]), "answer": "not stated",
                     "aliases": [], "answerable": False, "gold": [(o["office"], kind)], "office": o["office"]})
    out = []
    for n, r in enumerate(rows):
        candidates = kb_candidates(rng, docs, r["gold"], r["office"])
        support = [docs[g]["id"] for g in r["gold"]] if r["answerable"] else []
        out.append({"id": f"kb-{n + 1:02d}", "subject": r["subject"], "question": r["question"], "answer": r["answer"],
                    "aliases": r["aliases"], "answerable": r["answerable"], "support": support, "docs": candidates})
    return out


# --------------------------------------------------------------------------- writing


def build(name: str) -> list[dict[str, Any]]:
    """The rows of one of the four sets."""
    if name == "daily_digest":
        rows = [digest_item(n) for n in range(N_ITEMS)]
    elif name == "morning_brief":
        rows = [brief_item(n) for n in range(N_ITEMS)]
    elif name == "research_mining":
        rows = [research_item(n) for n in range(N_ITEMS)]
    elif name == "knowledge_base":
        rows = kb_items()
    else:
        raise ValueError(name)
    if name in ("daily_digest", "morning_brief"):
        for row in rows:
            check_briefing(row, name)
    return rows


SETS = ("daily_digest", "morning_brief", "research_mining", "knowledge_base")


def render(name: str) -> str:
    """The JSONL text of one set."""
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in build(name))


def main(argv: list[str]) -> int:
    for name in argv or SETS:
        (DATA / f"{name}.jsonl").write_text(render(name), encoding="utf-8")
        print(f"wrote {DATA / name}.jsonl")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
