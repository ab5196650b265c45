"""junit XML that CI tools accept: the file validates against the schema of its family.

pytest's default family, xunit2, allows no ``<properties>`` inside ``<testcase>``; the
plugin's per-sample properties need xunit1, which it selects unless the user chose.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import openai  # noqa: F401  (loaded once: pytester's in-process runs drop the modules they import)
import pytest
import xmlschema

from pytest_jeval.testing.openai_server import FakeOpenAIServer
from tests.support.endpoints import ROWS, MiniProject, respond

SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "junit"


@pytest.fixture(scope="module")
def xunit2_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(SCHEMAS / "junit-10.xsd")


@pytest.fixture(scope="module")
def xunit1_schema() -> xmlschema.XMLSchema:
    return xmlschema.XMLSchema(SCHEMAS / "xunit1.xsd")


@pytest.fixture
def project(pytester: pytest.Pytester) -> Iterator[MiniProject]:
    with FakeOpenAIServer(respond) as server:
        yield MiniProject(pytester, server)


def _run(project: MiniProject, *args: str) -> tuple[pytest.RunResult, Path]:
    # one wrong answer and one endpoint error, so the file has <failure> and <error> too
    suite = project.write(questions=["What is 1 + 1?", "NULL"])
    result = project.pytester.runpytest("--jeval-config", str(suite), "--junitxml", "junit.xml", *args)
    result.assert_outcomes(passed=len(ROWS), failed=1, errors=1)
    return result, project.pytester.path / "junit.xml"


def _properties(path: Path) -> list[dict[str, str]]:
    cases = ET.parse(path).findall(".//testcase")
    assert len(cases) == len(ROWS) + 2
    return [{p.get("name", ""): p.get("value", "") for p in c.findall("./properties/property")} for c in cases]


def test_default_selects_xunit1_with_properties_and_says_so(project: MiniProject, xunit1_schema: xmlschema.XMLSchema,
                                                            xunit2_schema: xmlschema.XMLSchema) -> None:
    result, path = _run(project)
    xunit1_schema.validate(path)
    assert not xunit2_schema.is_valid(path)  # what pytest's default family would have rejected
    assert all({"record_id", "benchmark", "model", "score", "latency"} <= set(p) for p in _properties(path))
    notes = [line for line in result.outlines if "junit_family" in line]
    assert notes == ["jeval: junit XML uses junit_family = xunit1, which allows the per-sample <properties> in each "
                     "<testcase> (set junit_family in your pytest configuration to choose)"]


def test_a_chosen_xunit2_is_kept_and_valid(project: MiniProject, xunit2_schema: xmlschema.XMLSchema) -> None:
    result, path = _run(project, "-o", "junit_family=xunit2")
    xunit2_schema.validate(path)
    assert all(p == {} for p in _properties(path))
    result.stdout.fnmatch_lines(["jeval: junit_family = xunit2 (as configured) allows no <properties>*"])


def test_a_chosen_family_in_the_ini_file_is_kept(project: MiniProject, xunit1_schema: xmlschema.XMLSchema,
                                                 xunit2_schema: xmlschema.XMLSchema) -> None:
    project.pytester.makeini("[pytest]\njunit_family = xunit2\n")
    result, path = _run(project)
    xunit2_schema.validate(path)
    project.pytester.makeini("[pytest]\njunit_family = legacy\n")
    result, path = _run(project)
    xunit1_schema.validate(path)
    assert all("record_id" in p for p in _properties(path))
    assert not [line for line in result.outlines if "junit_family" in line]
