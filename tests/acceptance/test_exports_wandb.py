"""The Weights & Biases export, for real: W&B in offline mode, its run directories read back."""

from __future__ import annotations

import json
import struct
import textwrap
from pathlib import Path
from typing import Any

import pytest

from pytest_jeval.exports.wandb import TABLE_COLUMNS, WandbError, settings_from, tag_list
from pytest_jeval.suite.config import Run
from tests.support.gsm import SECRET, JevalProject, chat_requests

wandb = pytest.importorskip("wandb", reason="wandb is not installed (pip install 'pytest-jeval[wandb]')")

WANDB_KEY = "wandb-key-SECRET-0123456789abcdef0123"


def read_wandb_file(path: Path) -> list[Any]:
    """The records of a ``.wandb`` transaction log: a ``:W&B`` header, then LevelDB-log chunks
    (crc32, length, type; 32 KiB blocks) holding ``wandb_internal_pb2.Record`` messages."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B", "not a .wandb file"
    block, pos, pending, out = 32768, 7, b"", []
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a chunk header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind == 0:  # zero padding
            continue
        if kind == 1:  # FULL
            payloads = [chunk]
        elif kind == 2:  # FIRST
            pending, payloads = chunk, []
        elif kind == 3:  # MIDDLE
            pending, payloads = pending + chunk, []
        else:  # LAST
            payloads, pending = [pending + chunk], b""
        for payload in payloads:
            record = wandb_internal_pb2.Record()
            record.ParseFromString(payload)
            out.append(record)
    return out


def offline_run(run_dir: Path) -> dict[str, Any]:
    """An offline run's name, project, group, tags, config and final summary, from its ``.wandb`` file
    (a nested summary value is kept as its leaves, keys joined with ``/``)."""
    (log,) = run_dir.glob("run-*.wandb")
    run: dict[str, Any] = {"summary": {}, "config": {}}
    for record in read_wandb_file(log):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            r = record.run
            run.update(name=r.display_name, project=r.project, group=r.run_group, tags=list(r.tags),
                       job_type=r.job_type)
            for item in r.config.update:
                run["config"][item.key] = json.loads(item.value_json)
        elif kind == "config":
            for item in record.config.update:
                run["config"][item.key] = json.loads(item.value_json)
        elif kind == "summary":
            for item in record.summary.update:
                key = "/".join(item.nested_key) if item.nested_key else item.key
                run["summary"][key] = json.loads(item.value_json)
    return run


def flat(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary's numbers with nested keys joined by ``/`` (the documented W&B metric names)."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if key in ("benchmark", "model", "category", "backend"):
            continue
        if isinstance(value, dict):
            out.update({f"{key}/{k}": v for k, v in flat(value).items()})
        elif key == "accuracy_ci" and value is not None:
            out[f"{key}/low"], out[f"{key}/high"] = value
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = value
    return out


def _suite(p: JevalProject, run: str) -> Path:
    text = f"""
    [meta]
    name = "wandb-suite"

    [run]
    output_dir = "out"
    max_retries = 1
    request_timeout = 5
    {run}

    [[models]]
    name = "test-model"
    base_url = "{p.server.base_url}"
    api_key_env = "JEVAL_TEST_KEY"

    [[models]]
    name = "other-model"
    base_url = "{p.server.base_url}"
    api_key_env = "JEVAL_TEST_KEY"

    [[benchmarks]]
    name = "gsm8k"
    data_files = "gsm.jsonl"
    """
    path = p.pytester.path / "suite.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_offline_runs_hold_each_pairs_summary_metrics_and_its_records_as_a_table(
    jeval_project: JevalProject, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    p = jeval_project
    wandb_dir = tmp_path / "wandb-dir"
    wandb_dir.mkdir()
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(wandb_dir))
    monkeypatch.setenv("WANDB_API_KEY", WANDB_KEY)
    suite = _suite(p, 'wandb_project = "jeval-test"\nwandb_tags = ["nightly", "ci"]\nwandb_group = "g1"')
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # what the samples made it: the export changes nothing
    result.stdout.fnmatch_lines(["jeval: W&B: logged 2 run(s) to jeval-test: gsm8k/test-model, gsm8k/other-model "
                                 f"(offline, in {wandb_dir / 'wandb'}: `wandb sync` uploads them)"])

    runs = {r["name"]: (d, r) for d in sorted((wandb_dir / "wandb").glob("offline-run-*")) for r in [offline_run(d)]}
    assert sorted(runs) == ["gsm8k/other-model", "gsm8k/test-model"]
    for model in ("test-model", "other-model"):
        run_dir, run = runs[f"gsm8k/{model}"]
        assert (run["project"], run["group"], run["tags"], run["job_type"]) == ("jeval-test", "g1", ["nightly", "ci"],
                                                                                 "eval")
        assert run["config"]["benchmark"] == "gsm8k" and run["config"]["model"] == model
        assert run["config"]["suite"] == "wandb-suite"
        summary = p.summary(model=model)
        metrics = flat(summary)
        assert metrics["accuracy"] == summary["accuracy"] and metrics["latency_stats/mean"] is not None
        for key, value in metrics.items():
            assert run["summary"][key] == value, key
        assert run["summary"]["samples/_type"] == "table-file"
        table = json.loads((run_dir / "files" / run["summary"]["samples/path"]).read_text())
        assert table["columns"] == list(TABLE_COLUMNS)
        records = p.records(model=model)
        assert table["data"] == [[r[c] for c in TABLE_COLUMNS] for r in records]
        assert len(table["data"]) == 10

    for path in [*wandb_dir.rglob("*"), *(p.pytester.path / "out").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and WANDB_KEY.encode() not in data, path
    assert WANDB_KEY not in result.stdout.str() + result.stderr.str()


def test_a_failing_export_is_reported_and_changes_neither_results_nor_exit_status(
    jeval_project: JevalProject, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    p = jeval_project
    monkeypatch.setenv("WANDB_MODE", "no-such-mode")  # W&B refuses it when the run starts
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    suite = p.suite(extra_run='wandb_project = "jeval-test"')
    result = p.pytester.runpytest("--jeval-config", str(suite), "-p", "no:randomly")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["jeval: W&B export failed (*); the results in * are complete, and the exit status "
                                 "is unchanged"])
    assert len(p.records()) == 10 and p.summary()["total_samples"] == 10


def test_a_missing_wandb_package_is_a_usage_error_before_any_request(jeval_project: JevalProject) -> None:
    p = jeval_project
    p.pytester.makeconftest("import sys\nsys.modules['wandb'] = None  # as if not installed\n")
    result = p.pytester.runpytest("--jeval-config", str(p.suite(extra_run='wandb_project = "x"')))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert ("ERROR: jeval: [run] wandb_project needs the optional package(s) wandb: "
            "pip install 'pytest-jeval[wandb]'; no samples were sent") in result.stderr.str()
    assert chat_requests(p.server) == [] and p.server.requests == []


def test_wandb_keys_without_a_project_are_refused_and_tags_take_a_list_or_a_comma_string(jeval_project: JevalProject
                                                                                          ) -> None:
    with pytest.raises(WandbError, match=r"wandb_entity, wandb_group set without wandb_project"):
        settings_from(Run(wandb_entity="team", wandb_group="g"), "s")
    assert settings_from(Run(), "s") is None
    assert tag_list("a, b,,c ") == ("a", "b", "c") and tag_list(["x", " "]) == ("x",)
    settings = settings_from(Run(wandb_project="p", wandb_tags="one,two"), "s")
    assert settings is not None and settings.tags == ("one", "two") and settings.group is None
    p = jeval_project
    result = p.pytester.runpytest("--jeval-config", str(p.suite(extra_run='wandb_entity = "team"')))
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*wandb_entity set without wandb_project*no samples were sent*"])
    assert p.server.requests == []
