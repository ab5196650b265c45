"""The on-disk response cache: reruns send nothing, opting out sends again, entries are atomic."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# Loaded once here: pytester's in-process runs drop the modules they import, so without
# this every run would import openai and scipy.stats again (seconds on a busy machine).
import openai
import openai.resources.chat  # noqa: F401
import pytest
import scipy.stats  # noqa: F401
from pydantic import SecretStr

from pytest_jeval.calls.cache import ResponseCache
from pytest_jeval.core.chat import ChatRequest, Endpoint, Reply, TokenLogprob
from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.gsm import SECRET, GsmScript, gsm_rows

N = 6
#: Fields that may differ between a live run and a cached rerun.
VOLATILE = {"latency_seconds", "throughput_tok_per_sec", "attempts", "cached", "call_windows", "ttft"}

SUITE = """
[run]
output_dir = "out"
max_retries = 1
request_timeout = 10
{run}

[[models]]
name = "test-model"
base_url = "{base_url}"
api_key_env = "JEVAL_TEST_KEY"

[[benchmarks]]
name = "gsm8k"
data_files = "gsm.jsonl"
"""


class CacheProject:
    def __init__(self, pytester: pytest.Pytester, server: FakeOpenAIServer) -> None:
        self.pytester = pytester
        self.server = server

    def suite(self, run: str = "", name: str = "suite.toml") -> Path:
        path = self.pytester.path / name
        path.write_text(SUITE.format(run=run, base_url=self.server.base_url))
        return path

    def run(self, *args: str, suite: Path | None = None) -> tuple[pytest.RunResult, int]:
        """Run the suite; return the result and the chat requests it sent."""
        before = self.server.request_count
        result = self.pytester.runpytest("--jeval-config", str(suite or self.suite()), "-p", "no:randomly", *args)
        result.assert_outcomes(passed=N - 2, failed=2)
        return result, self.server.request_count - before

    def records(self, out: str = "out") -> dict[str, dict[str, Any]]:
        path = self.pytester.path / out / "gsm8k_test-model.jsonl"
        return {r["record_id"]: r for r in map(json.loads, path.read_text().splitlines())}

    def entries(self, cache_dir: str = "out/.cache") -> list[Path]:
        return sorted((self.pytester.path / cache_dir).rglob("*.json"))


def stable(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {rid: {k: v for k, v in r.items() if k not in VOLATILE} for rid, r in records.items()}


@pytest.fixture
def project(pytester: pytest.Pytester, test_data: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CacheProject]:
    rows = gsm_rows(test_data, N)
    (pytester.path / "gsm.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("JEVAL_TEST_KEY", SECRET)
    with FakeOpenAIServer(GsmScript(rows, wrong={1}, garbage={2}), api_key=SECRET) as server:
        yield CacheProject(pytester, server)


@pytest.mark.parametrize("executor", ["thread", "process"])
def test_rerun_of_unchanged_suite_sends_nothing(project: CacheProject, executor: str) -> None:
    suite = project.suite(run=f'call_executor = "{executor}"')
    _first, sent = project.run(suite=suite)
    assert sent == N
    live = project.records()
    assert len(project.entries()) == N
    second, sent = project.run(suite=suite)
    assert sent == 0
    cached = project.records()
    assert stable(cached) == stable(live)
    assert all(r["cached"] is False for r in live.values()) and all(r["cached"] is True for r in cached.values())
    second.stdout.fnmatch_lines([f"calls: 0 sent, {N} from cache, 0 retries, *"])
    # the key stays out of the cache
    assert not [p for p in project.entries() if SECRET in p.read_text()]


def test_no_cache_option_neither_reads_nor_writes(project: CacheProject) -> None:
    _, sent = project.run("--jeval-no-cache")
    assert sent == N
    assert not (project.pytester.path / "out" / ".cache").exists()  # nothing written
    _, sent = project.run()
    assert sent == N
    _, sent = project.run("--jeval-no-cache")
    assert sent == N  # nothing read
    _, sent = project.run()
    assert sent == 0


def test_run_cache_false_sends_again(project: CacheProject) -> None:
    suite = project.suite(run="cache = false")
    assert project.run(suite=suite)[1] == N
    assert project.run(suite=suite)[1] == N
    assert not (project.pytester.path / "out" / ".cache").exists()


def test_cache_dir_is_honoured(project: CacheProject) -> None:
    suite = project.suite(run='cache_dir = "elsewhere/responses"')
    assert project.run(suite=suite)[1] == N
    assert len(project.entries("elsewhere/responses")) == N
    assert not (project.pytester.path / "out" / ".cache").exists()
    assert project.run("--jeval-output", "out2", suite=suite)[1] == 0  # the cache is not tied to the output


def test_corrupt_or_partial_entries_are_ignored_and_rewritten(project: CacheProject) -> None:
    project.run()
    live = project.records()
    entries = project.entries()
    good = entries[0].read_text()
    entries[0].write_text(good[: len(good) // 2])  # a partial write
    entries[1].write_bytes(b"\x00\xff garbage")
    entries[2].write_text("")
    entries[3].write_text(json.dumps({"format": 999, "text": "from another version"}))
    _, sent = project.run()
    assert sent == 4  # only the four broken entries were asked again
    assert stable(project.records()) == stable(live)
    for path in entries:
        data = json.loads(path.read_text())  # every entry is whole again
        assert data["format"] == 1 and isinstance(data["text"], str)
    assert project.run()[1] == 0


def test_no_temporary_files_are_left(project: CacheProject) -> None:
    project.run()
    cache = project.pytester.path / "out" / ".cache"
    leftovers = [p for p in cache.rglob("*") if (p.is_file() and not p.name.endswith(".json")) or p.name.startswith(".tmp-")]
    assert not leftovers
    assert len(project.entries()) == N


def _reply(text: str) -> Reply:
    return Reply(text=text, model="m", prompt_tokens=3, completion_tokens=2, latency_seconds=0.5,
                 finish_reason="stop", logprobs=(TokenLogprob("a", -0.1, (("a", -0.1), ("b", -2.0))),))


def test_put_is_atomic_when_the_writer_dies_midway(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("ab" + "0" * 62, _reply("old"))
    assert cache.get("ab" + "0" * 62).text == "old"  # type: ignore[union-attr]

    import pytest_jeval.core.files as files

    def dying_write(fd: int, data: bytes) -> None:
        os.write(fd, data[:20])  # half an entry reaches the disk, then the process "dies"
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "_write_all", dying_write)
    with pytest.raises(KeyboardInterrupt):
        cache.put("ab" + "0" * 62, _reply("new"))
    monkeypatch.undo()
    reply = cache.get("ab" + "0" * 62)
    assert reply is not None and reply.text == "old"  # the old entry is untouched
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["ab" + "0" * 62 + ".json"]
    cache.put("ab" + "0" * 62, _reply("new"))
    assert cache.get("ab" + "0" * 62).text == "new"  # type: ignore[union-attr]


def test_cache_round_trip_keeps_logprobs(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("cd" + "1" * 62, _reply("x"))
    got = cache.get("cd" + "1" * 62)
    assert got is not None and got.cached is True
    assert got.logprobs == _reply("x").logprobs and got.prompt_tokens == 3 and got.finish_reason == "stop"
    assert cache.get("cd" + "2" * 62) is None


# --------------------------------------------------------------------------- cache keys

ENDPOINT = Endpoint(base_url="http://127.0.0.1:1/v1", api_key=SecretStr("k1"))
BASE = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=16)


def test_identical_requests_share_a_key() -> None:
    same = ChatRequest(model="m", messages=[{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=16)
    assert BASE.cache_key(ENDPOINT) == same.cache_key(ENDPOINT)
    # the key and the client settings are not part of the content address
    other_key = Endpoint(base_url="http://127.0.0.1:1/v1", api_key=SecretStr("k2"), max_concurrency=3, timeout=9)
    assert BASE.cache_key(ENDPOINT) == BASE.cache_key(other_key)


@pytest.mark.parametrize("change", [
    {"nonce": 1},
    {"model": "m2"},
    {"messages": [{"role": "user", "content": "hi!"}]},
    {"messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]},
    {"temperature": 0.7},
    {"max_tokens": 17},
    {"logprobs": True},
    {"extra": (("seed", 1),)},
    {"extra": (("top_p", 0.9),)},
], ids=lambda c: next(iter(c)))
def test_any_content_change_is_a_new_key(change: dict[str, Any]) -> None:
    import dataclasses

    assert dataclasses.replace(BASE, **change).cache_key(ENDPOINT) != BASE.cache_key(ENDPOINT)


def test_endpoint_is_part_of_the_key() -> None:
    other = Endpoint(base_url="http://127.0.0.1:2/v1", api_key=SecretStr("k1"))
    assert BASE.cache_key(ENDPOINT) != BASE.cache_key(other)


NONCE_BENCH = '''
from pytest_jeval import Benchmark, Sample, Score


def to_sample(row, index, ctx):
    return Sample(id=ctx.default_id(index), input=row["q"], target="x")


BENCHMARK = Benchmark(name="nonces", dataset=None, to_sample=to_sample, prompt=lambda s: None)


def test_nonces(sample, model, score):
    texts = [model.chat(sample.input, nonce=k).text for k in range(3)]
    score(Score(correct=len(texts) == 3, extracted=" | ".join(texts)))
'''


def test_nonce_repeats_are_separate_cache_entries(pytester: pytest.Pytester) -> None:
    (pytester.path / "bench_nonces.py").write_text(NONCE_BENCH)
    (pytester.path / "nonces.jsonl").write_text(json.dumps({"q": "roll a die"}) + "\n")
    answers = iter(f"answer {i}" for i in range(100))
    with FakeOpenAIServer(lambda body, attempt: next(answers)) as server:
        suite = pytester.path / "suite.toml"
        suite.write_text(f"""
[run]
output_dir = "out"

[[models]]
name = "test-model"
base_url = "{server.base_url}"

[[benchmarks]]
name = "nonces"
module = "bench_nonces.py"
data_files = "nonces.jsonl"
""")
        pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=1)
        # the nonce is not sent: the server saw the same body three times
        assert [r["attempt"] for r in server.requests if r["path"].endswith("/chat/completions")] == [1, 2, 3]
        assert len(list((pytester.path / "out" / ".cache").rglob("*.json"))) == 3
        pytester.runpytest("--jeval-config", str(suite)).assert_outcomes(passed=1)
        assert server.request_count == 3  # all three came from the cache
    record = json.loads((pytester.path / "out" / "nonces_test-model.jsonl").read_text())
    assert record["extracted"] == "answer 0 | answer 1 | answer 2" and record["cached"] is True
