"""A benchmark's own settings (``[benchmarks.options]``) and ``data_dir``: declared by the benchmark, checked
before any request, and handed to its loader."""

from __future__ import annotations

import json
import textwrap

import pytest

from pytest_jeval.testing.openai_server import FakeOpenAIServer

BENCH = '''
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from pytest_jeval import Benchmark, Sample, Score
from pytest_jeval.suite.options import SuitePath


class Options(BaseModel):
    model_config = ConfigDict(extra="forbid")
    greeting: str = "hi"
    notes: SuitePath | None = None
    copies: int = 1


def read_rows(files, ctx):
    rows = json.loads((ctx.local_dir / "rows.json").read_text())
    for row in rows:
        yield {**row, "greeting": ctx.options.greeting, "notes": str(ctx.options.notes), "copies": ctx.options.copies}


def to_sample(row, index, ctx):
    return Sample(id=f"opt-{index}", input=row["q"], target=row["a"], metadata={k: row[k] for k in ("greeting", "notes", "copies")})


BENCHMARK = Benchmark(name="optioned", to_sample=to_sample, prompt=lambda s: None, read_rows=read_rows,
                      options=Options, data_dir="rows.json, a list of {q, a}")


def test_optioned(sample, response, score):
    with Path("seen.jsonl").open("a") as fh:
        fh.write(json.dumps(sample.metadata) + "\\n")
    score(Score(correct=True))
'''


def project(pytester: pytest.Pytester, options: str, base_url: str = "http://127.0.0.1:9/v1",
            data_dir: str = 'data_dir = "local"') -> pytest.RunResult:
    (pytester.path / "bench_optioned.py").write_text("import json\n" + BENCH)
    (pytester.path / "local").mkdir(exist_ok=True)
    (pytester.path / "local" / "rows.json").write_text(json.dumps([{"q": "one", "a": "1"}]))
    (pytester.path / "suite.toml").write_text(textwrap.dedent(f"""
        [run]
        output_dir = "out"

        [[models]]
        name = "m"
        base_url = "{base_url}"

        [[benchmarks]]
        name = "optioned"
        module = "bench_optioned.py"
        {data_dir}
        [benchmarks.options]
    """) + textwrap.dedent(options))
    return pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")


def test_options_and_data_dir_reach_the_loader(pytester: pytest.Pytester) -> None:
    with FakeOpenAIServer() as server:
        result = project(pytester, 'greeting = "hello"\nnotes = "notes.md"\ncopies = 3\n', server.base_url)
    result.assert_outcomes(passed=1)
    seen = json.loads((pytester.path / "seen.jsonl").read_text())
    assert seen == {"greeting": "hello", "notes": str(pytester.path / "notes.md"), "copies": 3}


@pytest.mark.parametrize(("options", "data_dir", "message"), [
    ('greting = "x"\n', 'data_dir = "local"',
     "*benchmarks[[]0[]].options.greting: unknown key; the options of 'optioned' are: greeting, notes, copies*"),
    ('copies = "many"\n', 'data_dir = "local"', "*benchmarks[[]0[]].options.copies: Input should be a valid integer*"),
    ("", 'data_dir = "nowhere"', "*benchmarks[[]0[]].data_dir: no such directory: *nowhere (it should hold rows.json*"),
])
def test_bad_options_and_data_dir_are_usage_errors(pytester: pytest.Pytester, options: str, data_dir: str,
                                                    message: str) -> None:
    result = project(pytester, options, data_dir=data_dir)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


def test_a_benchmark_without_options_refuses_them(pytester: pytest.Pytester) -> None:
    (pytester.path / "suite.toml").write_text(textwrap.dedent("""
        [[models]]
        name = "m"
        base_url = "http://127.0.0.1:9/v1"

        [[benchmarks]]
        name = "quickstart"
        data_dir = "."
        [benchmarks.options]
        level = 2
    """))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].data_dir: 'quickstart' takes no data_dir*"])
    (pytester.path / "suite.toml").write_text((pytester.path / "suite.toml").read_text().replace('data_dir = "."\n', ""))
    result = pytester.runpytest("--jeval-config", "suite.toml", "-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*benchmarks[[]0[]].options.level: 'quickstart' takes no options*"])
