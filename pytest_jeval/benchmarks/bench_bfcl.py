"""BFCL: the Berkeley Function Calling Leaderboard's single-turn categories, with native tool calls.

Categories (the suite's ``subset``: one name or a comma list; default all five):
``simple`` (BFCL's ``simple_python``), ``multiple``, ``parallel``,
``parallel_multiple`` and ``irrelevance``.

Data: BFCL's JSON Lines files, read at run time from the installed PyPI package
``bfcl-eval`` (``pip install --no-deps bfcl-eval``, or ``make bfcl``; its own
dependencies are heavy and pinned, and none is needed here): the question file
``bfcl_eval/data/BFCL_v<N>_<category>.json`` and its gold in
``bfcl_eval/data/possible_answer/`` under the same name (irrelevance has none).
``data_files`` may name BFCL question files instead; each one's gold is read
from ``possible_answer/<same file name>`` beside it, BFCL's own layout. A row's
category comes from its id (``simple_python_3`` is ``simple``).

Each question's functions are offered as tools (OpenAI function specs: BFCL's
``dict`` type becomes ``object``, ``float`` ``number``, ``tuple`` ``array``,
``any`` ``string``; ``.`` in a name becomes ``_``, as BFCL's OpenAI handler
does). The episode ends after the first reply: its tool calls are the answer
and are never run. Scoring is the ``tool_call_accuracy`` evaluator's BFCL rules
(names mapped back; every expected call matched by a distinct call, any order);
an ``irrelevance`` question is right when the reply makes no tool call.
per_subject is the category.
"""

from __future__ import annotations

import importlib.resources
import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from pytest_jeval import Benchmark, LoadContext, Sample, Score
from pytest_jeval.agents import AgentSpec, Episode, Tool, spec_tool
from pytest_jeval.agents.tool import check_name
from pytest_jeval.judge_bench.evaluators.tool_calls import Call, match_calls
from pytest_jeval.scoring.registry import metadata_of, register_scorer
from pytest_jeval.suite.dataset import DatasetLoadError

PACKAGE = "bfcl_eval"
"""The import name of the ``bfcl-eval`` distribution."""
INSTALL = "pip install --no-deps bfcl-eval"
CATEGORIES = ("simple", "multiple", "parallel", "parallel_multiple", "irrelevance")
#: BFCL's file stem of each category (``BFCL_v<N>_<stem>.json``).
FILE_STEMS = {"simple": "simple_python", "multiple": "multiple", "parallel": "parallel",
              "parallel_multiple": "parallel_multiple", "irrelevance": "irrelevance"}
#: BFCL id prefix -> category.
_ID_CATEGORIES = {stem: cat for cat, stem in FILE_STEMS.items()} | {"simple": "simple"}
#: BFCL parameter types -> JSON schema types (anything else is sent as ``string``, as BFCL does).
TYPES = {"dict": "object", "object": "object", "float": "number", "number": "number", "integer": "integer",
         "string": "string", "boolean": "boolean", "bool": "boolean", "array": "array", "list": "array",
         "tuple": "array", "any": "string"}
_ID = re.compile(r"^(?P<category>.+)_\d+$")


# -- tool specs ---------------------------------------------------------------------------

def _schema(node: Mapping[str, Any]) -> dict[str, Any]:
    """One BFCL parameter schema with JSON schema types, recursively (properties and items)."""
    out = dict(node)
    out["type"] = TYPES.get(str(node.get("type")), "string")
    if isinstance(node.get("properties"), Mapping):
        out["properties"] = {k: _schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), Mapping):
        out["items"] = _schema(node["items"])
    return out


def openai_function(function: Mapping[str, Any]) -> dict[str, Any]:
    """A BFCL function doc as an OpenAI function spec (``name``, ``description``, ``parameters``).

    Raises ValueError when the converted name is not one the OpenAI API accepts.
    """
    parameters = _schema(function.get("parameters") or {"type": "dict", "properties": {}})
    parameters["type"] = "object"
    parameters.setdefault("properties", {})
    return {
        "name": check_name(str(function["name"]).replace(".", "_")),
        "description": str(function.get("description", "")),
        "parameters": parameters,
    }


def openai_functions(functions: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The specs of a question's functions, and ``{name sent: BFCL name}`` to map calls back."""
    specs = [openai_function(f) for f in functions]
    names: dict[str, str] = {}
    for spec, f in zip(specs, functions):
        if spec["name"] in names:
            raise ValueError(f"functions {names[spec['name']]!r} and {f['name']!r} are both sent as {spec['name']!r}")
        names[spec["name"]] = str(f["name"])
    return specs, names


# -- data -------------------------------------------------------------------------------

def categories(subset: str | None) -> tuple[str, ...]:
    """The categories a suite's ``subset`` names (all five when None); DatasetLoadError for others."""
    if subset is None or not subset.strip():
        return CATEGORIES
    wanted = tuple(dict.fromkeys(s.strip() for s in subset.split(",") if s.strip()))
    unknown = [c for c in wanted if c not in CATEGORIES]
    if unknown or not wanted:
        raise DatasetLoadError(f"bfcl: unknown subset {', '.join(map(repr, unknown)) or repr(subset)}; "
                               f"the categories are {', '.join(CATEGORIES)} (a comma list picks several)")
    return wanted


def category_of(record_id: str) -> str:
    """The category of a BFCL id (``parallel_multiple_7`` -> ``parallel_multiple``); ValueError for others."""
    m = _ID.match(record_id)
    category = _ID_CATEGORIES.get(m.group("category")) if m else None
    if category is None:
        raise ValueError(f"bfcl: id {record_id!r} is not in one of the categories {', '.join(CATEGORIES)} "
                         "(BFCL ids are <category>_<n>, e.g. simple_python_0)")
    return category


def read_json_lines(path: Path) -> list[dict[str, Any]]:
    """The objects of a BFCL file (JSON Lines, as BFCL writes them; a JSON array is read too)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetLoadError(f"bfcl: cannot read {path}: {exc}") from None
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as exc:
        raise DatasetLoadError(f"bfcl: {path} is not BFCL JSON Lines: {exc}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "id" in r for r in rows):
        raise DatasetLoadError(f"bfcl: {path} must hold one JSON object with an \"id\" per line")
    return rows


def package_data_dir() -> Path:
    """``bfcl_eval/data`` of the installed ``bfcl-eval``; DatasetLoadError naming the install command when absent."""
    try:
        root = importlib.resources.files(PACKAGE)
    except ModuleNotFoundError:
        raise DatasetLoadError(
            f"bfcl: the BFCL data ships in the PyPI package bfcl-eval, which is not installed; install it with "
            f"`{INSTALL}` (or `make bfcl`), or set data_files to BFCL question files") from None
    data = Path(str(root)) / "data"
    if not data.is_dir():
        raise DatasetLoadError(f"bfcl: the installed bfcl-eval has no data folder at {data}; reinstall it with "
                               f"`{INSTALL}`, or set data_files to BFCL question files")
    return data


def package_file(data: Path, stem: str) -> Path:
    """The newest ``BFCL_v<N>_<stem>.json`` in the package's data folder."""
    found = [(int(m.group(1)), p) for p in data.glob(f"BFCL_v*_{stem}.json")
             if (m := re.fullmatch(rf"BFCL_v(\d+)_{re.escape(stem)}\.json", p.name))]
    if not found:
        raise DatasetLoadError(f"bfcl: no BFCL_v<N>_{stem}.json in {data}; reinstall bfcl-eval with `{INSTALL}`")
    return max(found)[1]


def _with_answers(question_file: Path, rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The rows with their ``ground_truth`` from ``possible_answer/<name>`` beside the question file."""
    needs = {str(r["id"]) for r in rows if category_of(str(r["id"])) != "irrelevance"}
    answers: dict[str, Any] = {}
    if needs:
        answer_file = question_file.parent / "possible_answer" / question_file.name
        if not answer_file.is_file():
            raise DatasetLoadError(f"bfcl: {question_file} needs its gold in {answer_file} (BFCL's layout: "
                                   "possible_answer/<same file name> beside the question file)")
        answers = {str(a["id"]): a.get("ground_truth") for a in read_json_lines(answer_file)}
    for row in rows:
        gold = answers.get(str(row["id"]))
        if str(row["id"]) in needs and gold is None:
            raise DatasetLoadError(f"bfcl: {row['id']!r} of {question_file} has no ground_truth in "
                                   f"{question_file.parent / 'possible_answer' / question_file.name}")
        yield {**row, "ground_truth": gold}


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """The question rows, each with its ``ground_truth``: from ``data_files``, else from the installed package."""
    wanted = categories(ctx.subset)
    if files:
        question_files = list(files)
    else:
        data = package_data_dir()
        question_files = [package_file(data, FILE_STEMS[c]) for c in wanted]
    out: list[dict[str, Any]] = []
    for f in question_files:
        try:
            out += _with_answers(f, read_json_lines(f))
        except ValueError as exc:  # an id outside the five categories
            raise DatasetLoadError(f"{exc} (in {f})") from None
    return out


# -- samples and prompt ------------------------------------------------------------------

def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample | None:
    """One single-turn BFCL question; rows outside the suite's ``subset`` are skipped."""
    record_id = str(row["id"])
    category = category_of(record_id)
    if category not in categories(ctx.subset):
        return None
    turns = row["question"]
    if not isinstance(turns, list) or len(turns) != 1 or not isinstance(turns[0], list) or not turns[0]:
        raise ValueError(f"{record_id}: question must be one turn (a list of messages)")
    messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in turns[0]]
    functions = row["function"] if isinstance(row["function"], list) else [row["function"]]
    specs, names = openai_functions(functions)
    gold = row.get("ground_truth")
    if category != "irrelevance" and not (isinstance(gold, list) and gold and all(
            isinstance(g, dict) and len(g) == 1 for g in gold)):
        raise ValueError(f"{record_id}: ground_truth must be a list of {{function: {{param: [values]}}}}")
    user = [m["content"] for m in messages if m["role"] == "user"]
    return Sample(
        id=record_id,
        input=user[-1] if user else messages[-1]["content"],
        target=gold if category != "irrelevance" else [],
        subject=category,
        metadata={"category": category, "messages": messages, "functions": functions, "tools": specs,
                  "names": names},
    )


def prompt(sample: Sample) -> list[dict[str, Any]]:
    """The question's messages as BFCL gives them (no system prompt added)."""
    return [dict(m) for m in sample.metadata["messages"]]


def tools(sample: Sample) -> list[Tool]:
    """The question's functions as spec-only tools: offered to the model, never run."""
    return [spec_tool(spec) for spec in sample.metadata["tools"]]


# -- scoring -----------------------------------------------------------------------------

def reply_calls(sample: Sample, episode: Episode) -> tuple[list[Call], str | None]:
    """The calls of the episode's reply with BFCL's names, and why they cannot be scored (None when they can)."""
    reply = episode.replies[-1] if episode.replies else None
    names: Mapping[str, str] = sample.metadata["names"]
    calls: list[Call] = []
    problem = None
    for call in reply.tool_calls if reply is not None else ():
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            args, problem = {}, problem or f"arguments of {call.name!r} are not JSON: {exc.msg}"
        if not isinstance(args, dict):
            args, problem = {}, problem or f"arguments of {call.name!r} are not a JSON object"
        calls.append((names.get(call.name, call.name), args))
    return calls, problem


def score_calls(sample: Sample, calls: list[Call], bad_arguments: str | None = None) -> Score:
    """BFCL's AST rules on ``calls`` (BFCL names, parsed arguments); for ``irrelevance``, right when there is none.

    ``bad_arguments`` says why a call's arguments were not a JSON object (the answer is then wrong).
    """
    category = sample.metadata["category"]
    if category == "irrelevance":
        reason = f"{len(calls)} tool calls, expected none" if calls else None
    else:
        reason = bad_arguments or match_calls(calls, list(sample.target), list(sample.metadata["functions"]),
                                              "python")
    return Score(correct=reason is None, extracted=[{name: args} for name, args in calls], expected=sample.target,
                 metadata={"category": category, "tool_calls": len(calls), "reason": reason,
                           "bad_arguments": bad_arguments})


def score_bfcl(sample: Sample, episode: Episode) -> Score:
    """Score the tool calls of the episode's reply (see :func:`score_calls`)."""
    calls, problem = reply_calls(sample, episode)
    return score_calls(sample, calls, problem)


def record_calls(record: Mapping[str, Any]) -> list[Call]:
    """The calls a stored record's ``extracted`` holds (``[{bfcl_name: arguments}]``), for ``jeval rescore``."""
    stored = record.get("extracted")
    if not isinstance(stored, list) or not all(isinstance(c, dict) and len(c) == 1 for c in stored):
        raise ValueError(f"record {record.get('record_id')!r}: extracted is not a list of {{name: arguments}}")
    return [(str(name), dict(args) if isinstance(args, dict) else {}) for c in stored for name, args in c.items()]


BENCHMARK = Benchmark(
    name="bfcl",
    category="agentic",
    description="BFCL single-turn function calling (simple, multiple, parallel, parallel_multiple, irrelevance)",
    to_sample=to_sample,
    prompt=prompt,
    read_rows=read_rows,
    data_source="pypi:bfcl-eval",
    backends=("agent",),
    agent=AgentSpec(tools=tools, execute=False),
    scorer="bfcl",
    scoring="BFCL AST match (tool_call_accuracy rules); irrelevance: no call",
    sample_count=1240,
)


def test_bfcl(sample: Sample, episode: Episode, score: Any) -> None:
    """The reply's tool calls match the gold calls (BFCL rules), or there is none for an irrelevant question."""
    score(score_bfcl(sample, episode))


@register_scorer("bfcl", needs_sample=True)
def record_bfcl(record: dict[str, Any], sample: Sample) -> Score:
    """BFCL's AST rules on the stored calls (``extracted``) against the sample's gold and function docs."""

    bad = metadata_of(record).get("bad_arguments")
    return score_calls(sample, record_calls(record), bad if isinstance(bad, str) else None)
