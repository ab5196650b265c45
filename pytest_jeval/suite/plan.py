"""The evaluation plan: a validated suite resolved into benchmarks, models, endpoints and requests."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import SecretStr

from pytest_jeval.calls.settings import RequestSettings, adapt, build_request
from pytest_jeval.core.benchmark import Benchmark, find_benchmark
from pytest_jeval.core.chat import ChatRequest, Endpoint, PromptLike
from pytest_jeval.core.sample import Sample, repeat_nonce
from pytest_jeval.suite.config import (
    BenchmarkEntry,
    Judge,
    ModelEntry,
    Suite,
    SuiteError,
    UserModel,
    load_suite,
)
from pytest_jeval.suite.dataset import load_samples
from pytest_jeval.suite.endpoints import API_KEY_ENV, resolve_endpoint
from pytest_jeval.suite.fewshot import IDS as FEWSHOT_IDS
from pytest_jeval.suite.fewshot import FewShotPool, with_examples

if TYPE_CHECKING:
    from pytest_jeval.agents.spec import AgentSpec


@dataclass
class PlannedBenchmark:
    """One ``[[benchmarks]]`` entry with its definition and module."""

    entry: BenchmarkEntry
    benchmark: Benchmark
    module: ModuleType
    files: list[Path]
    """Resolved local data files (suite ``data_files`` or the bundled ones)."""
    fewshot_files: list[Path] = field(default_factory=list)
    """Resolved ``fewshot_files`` (a local copy of the few-shot split)."""
    backend: str = "direct"
    """``direct`` or ``agent``: how this benchmark's samples are run."""
    notes: list[str] = field(default_factory=list)
    """What the suite sets that this benchmark does not use, in words (shown once in the terminal)."""
    options: Any = None
    """The entry's ``[benchmarks.options]``, validated by the benchmark's own model (None: it takes none)."""
    local_dir: Path | None = None
    """The entry's ``data_dir``, resolved and checked."""
    sequential: bool = False
    """Episode mode: each model runs the samples as one sequence, each episode remembering earlier ones."""

    @property
    def agent_spec(self) -> AgentSpec:
        """How the benchmark runs as an agent: its own :class:`AgentSpec`, else the default one
        (its prompt, with the suite's ``tools``)."""
        from pytest_jeval.agents.spec import AgentSpec

        return self.benchmark.agent or AgentSpec()

    @property
    def agent(self) -> str:
        """The named agent that drives this benchmark's episodes (``agent = ...``, else ``orchestrator``)."""
        from pytest_jeval.agents.named import DEFAULT_AGENT

        return self.entry.agent or DEFAULT_AGENT

    @property
    def calls_model(self) -> bool:
        """False when the benchmark's named agent never calls the model under test (``oracle``, ``nop``)."""
        if not self.is_agent or self.is_external:
            return True
        from pytest_jeval.agents.named import AGENTS

        return AGENTS.get(self.agent).calls_model

    @property
    def needs_user_model(self) -> bool:
        """True when this benchmark's episodes need the ``[user]`` model (``AgentSpec.needs_user_model``)
        and its named agent calls the model (``oracle`` and ``nop`` never consult the user)."""
        spec = self.benchmark.agent
        return (self.is_agent and not self.is_external and spec is not None and spec.user is not None
                and spec.needs_user_model and self.calls_model)

    @property
    def is_agent(self) -> bool:
        """True when each sample runs as an agent episode (the built-in loop or an external agent)."""
        return self.backend == "agent" or self.is_external

    @property
    def is_external(self) -> bool:
        """True when each sample runs an external agent CLI (``hermes``, ``openclaw``, ``command``)."""
        return self.backend not in ("direct", "agent")

    @property
    def module_file(self) -> Path:
        """Path of the module defining the benchmark."""
        return Path(self.module.__file__ or "")


@dataclass
class EvalPlan:
    """Everything the plugin needs to know about a suite, built once per process."""

    suite: Suite
    path: Path
    output_dir: Path
    cache_dir: Path | None
    benchmarks: dict[str, PlannedBenchmark]
    """By key (the entry's ``label``, else its ``name``)."""
    models: dict[str, ModelEntry]
    """By key (the entry's ``label``, else its ``name``); the request sends the entry's ``name``."""
    local_base_url: str | None = None
    """URL of the bundled local model's server, once started."""
    overrides: tuple[str, ...] = ()
    """The ``--jeval-set KEY=VALUE`` overrides applied to the suite file, as given."""
    judge_validation: tuple[BenchmarkEntry, list[Path]] | None = None
    """``[judge] validate``: the judge-benchmark entry of the gold set the judge must pass, and its files."""
    output_file: Path | None = None
    """``[run] output_file`` resolved (in :attr:`output_dir`): the one pair's JSONL, when the suite names it."""
    _samples: dict[str, tuple[list[Sample], int]] = field(default_factory=dict)
    _settings: dict[tuple[str, str], RequestSettings] = field(default_factory=dict)
    _fewshot: dict[str, FewShotPool] = field(default_factory=dict)

    # -- construction ----------------------------------------------------------------
    @classmethod
    def from_file(
        cls, path: Path, *, invocation_dir: Path, output_dir: str | None = None, use_cache: bool = True,
        overrides: Sequence[str] = (),
    ) -> EvalPlan:
        """Load and resolve a suite, with ``overrides`` (``--jeval-set KEY=VALUE``) applied before
        validation; raise SuiteError with the file and key path (and the override) on any problem."""
        path = path if path.is_absolute() else invocation_dir / path
        suite = load_suite(path, overrides=overrides)
        try:
            plan = cls._resolve(suite, path, invocation_dir=invocation_dir, output_dir=output_dir, use_cache=use_cache)
        except SuiteError as exc:
            from pytest_jeval.suite.overrides import applied_to

            raise SuiteError(applied_to(path, overrides).annotate(str(exc))) from exc.__cause__
        plan.overrides = tuple(overrides)
        return plan

    @classmethod
    def _resolve(cls, suite: Suite, path: Path, *, invocation_dir: Path, output_dir: str | None,
                 use_cache: bool) -> EvalPlan:
        """The plan of a validated suite (what ``from_file`` checks past validation)."""
        named = Path(suite.run.output_file) if suite.run.output_file else None
        pairs = len(suite.benchmarks) * len(suite.models)
        if named is not None and pairs != 1:
            raise SuiteError(f"invalid suite {path}:\n  run.output_file: names the results file of one (benchmark, "
                             f"model) pair; this suite has {pairs} pairs: give output_dir instead (each pair writes "
                             "its own file there)")
        out = Path(output_dir or (named.parent if named is not None else suite.run.output_dir))
        out = out if out.is_absolute() else invocation_dir / out
        cache_dir: Path | None = None
        if use_cache and suite.run.cache:
            cache_dir = Path(suite.run.cache_dir) if suite.run.cache_dir else out / ".cache"
            cache_dir = cache_dir if cache_dir.is_absolute() else invocation_dir / cache_dir
        benchmarks = {}
        for i, entry in enumerate(suite.benchmarks):
            benchmarks[entry.key] = planned = _plan_benchmark(path, i, entry)
            _plan_sequence(path, i, planned, suite)
            if planned.benchmark.needs_judge and suite.judge is None:
                raise SuiteError(
                    f"invalid suite {path}:\n  benchmarks[{i}].name: {entry.name!r} is scored by an LLM judge; "
                    "add a [judge] table (model, base_url, api_key_env)"
                )
            if planned.needs_user_model and suite.user is None:
                raise SuiteError(
                    f"invalid suite {path}:\n  benchmarks[{i}].name: {entry.name!r} talks with a simulated user "
                    "played by the [user] model; add a [user] table (model, base_url, api_key_env), or run an agent "
                    "that does not call the model (agent = \"oracle\" or \"nop\")"
                )
        for i, m in enumerate(suite.models):
            _check_model(path, i, m)
        if suite.run.http_client == "aiohttp":
            from pytest_jeval.calls.engines.openai_compat import aiohttp_available

            if not aiohttp_available():
                raise SuiteError(f'invalid suite {path}:\n  run.http_client: "aiohttp" needs openai\'s aiohttp '
                                 'transport (openai.DefaultAioHttpClient: a recent openai, with aiohttp installed); '
                                 'use "auto" or "httpx"')
        for i, entry in enumerate(suite.benchmarks):
            if entry.judge_repeats > 1:
                _check_judge_repeats(path, i, benchmarks[entry.key], suite.judge)
        validation = _plan_judge_validation(suite, path, benchmarks) if suite.judge and suite.judge.gold_set else None
        if suite.run.max_cost_usd is not None:
            from pytest_jeval.suite.budget import budget_prices

            budget_prices(suite, path)  # an unknown price is a usage error before anything starts
        for table, cfg in (("judge", suite.judge), ("user", suite.user)):
            if cfg is not None and cfg.api_key_env and cfg.api_key_env not in os.environ:
                env = cfg.api_key_env
                raise SuiteError(f"invalid suite {path}:\n  {table}.api_key_env: environment variable "
                                 f"{shown_env_name(env)} is not set")
        for src in (*suite.models, suite.judge, suite.user):  # a URL from the environment, checked now
            if src is not None and (src.engine or "openai") != "local":
                try:
                    resolve_endpoint(src, suite.backend.external, src.engine or "openai")
                except SuiteError as exc:
                    raise SuiteError(f"invalid suite {path}:\n  {exc}") from None
        return cls(
            suite=suite,
            path=path,
            output_dir=out,
            output_file=out / named.name if named is not None else None,
            cache_dir=cache_dir,
            benchmarks=benchmarks,
            models={m.key: m for m in suite.models},
            judge_validation=validation,
        )

    def keys(self, environ: Mapping[str, str] | None = None) -> list[str | SecretStr | None]:
        """Every key this plan may send, from every source :meth:`endpoint_for` reads (for redaction)."""
        env = os.environ if environ is None else environ
        suite = self.suite
        sources = [*suite.models, *(t for t in (suite.judge, suite.user) if t is not None)]
        keys: list[str | SecretStr | None] = [suite.backend.external.api_key]
        for src in sources:
            keys.append(src.api_key)
            if src.api_key_env:
                keys.append(env.get(src.api_key_env))
        keys.extend(env.get(name) for name in (*API_KEY_ENV, "OPENAI_API_KEY"))
        return keys

    @property
    def needs_local_model(self) -> bool:
        """True when a model or the judge uses the bundled local engine."""
        judge = self.suite.judge
        return any(m.engine == "local" for m in self.models.values()) or (judge is not None and judge.engine == "local")

    @property
    def needs_user(self) -> bool:
        """True when a ``[user]`` model is set and a benchmark of the suite has a simulated user."""
        return self.suite.user is not None and any(
            pb.is_agent and pb.benchmark.agent is not None and pb.benchmark.agent.user is not None
            for pb in self.benchmarks.values())

    def local_model_path(self) -> str | None:
        """A ``model_path`` override for the local engine, if the suite sets one."""
        for m in self.models.values():
            if m.engine == "local" and m.model_path:
                return str(_relative(self.path, m.model_path))
        judge = self.suite.judge
        if judge is not None and judge.engine == "local" and judge.model_path:
            return str(_relative(self.path, judge.model_path))
        return None

    def jsonl_path(self, bench: str, model: str) -> Path:
        """The JSONL of a (benchmark, model) pair: ``[run] output_file`` when set, else
        ``{output_dir}/{benchmark}_{model-slug}.jsonl`` (:func:`~pytest_jeval.core.paths.jsonl_path`)."""
        from pytest_jeval.core.paths import jsonl_path

        return self.output_file if self.output_file is not None else jsonl_path(self.output_dir, bench, model)

    # -- samples ---------------------------------------------------------------------
    def samples(self, name: str) -> tuple[list[Sample], int]:
        """Samples of one benchmark (loaded once per process) and the count of skipped rows."""
        if name not in self._samples:
            pb = self.benchmarks[name]
            e = pb.entry
            self._samples[name] = load_samples(
                pb.benchmark,
                files=pb.files,
                split=e.split,
                subset=e.subset,
                seed=self.suite.run.seed,
                record_ids=e.record_ids,
                max_samples=e.max_samples,
                sandbox=e.sandbox,
                options=pb.options,
                local_dir=pb.local_dir,
            )
            if e.num_fewshot and pb.benchmark.fewshot is not None:
                samples, skipped = self._samples[name]
                pool = self.fewshot_pool(name)
                self._samples[name] = ([pool.attach(s) for s in samples], skipped)
            if e.repeats > 1 and not e.evaluator:  # a judge benchmark repeats its evaluator's runs instead
                samples, skipped = self._samples[name]
                self._samples[name] = (repeated(samples, e.repeats), skipped)
            if pb.sequential and self.suite.run.episode_order == "seeded":
                samples, skipped = self._samples[name]
                self._samples[name] = (seeded_order(samples, self.suite.run.seed), skipped)
        return self._samples[name]

    def fewshot_pool(self, name: str) -> FewShotPool:
        """The few-shot source of a benchmark entry with ``num_fewshot`` (loaded once per process)."""
        if name not in self._fewshot:
            from pytest_jeval.suite.fewshot import load_pool

            pb = self.benchmarks[name]
            e = pb.entry
            self._fewshot[name] = load_pool(
                pb.benchmark, k=int(e.num_fewshot or 0), files=pb.fewshot_files, eval_files=pb.files,
                eval_split=e.split, subset=e.subset, seed=self.suite.run.seed, options=pb.options,
                local_dir=pb.local_dir, sandbox=e.sandbox)
        return self._fewshot[name]

    # -- endpoints and requests ------------------------------------------------------
    def endpoint_for(self, entry: ModelEntry | None = None, *, judge: bool = False, user: bool = False) -> Endpoint:
        """Resolve base_url and key by :func:`resolve_endpoint` (the entry, then the environment, then
        ``[backend.external]``, then the engine's default).

        ``judge`` resolves the ``[judge]`` table's endpoint, ``user`` the ``[user]`` table's.
        """
        src: Any = self.suite.user if user else self.suite.judge if judge else entry
        assert src is not None
        run = self.suite.run
        engine = src.engine or "openai"
        if engine == "local":
            if self.local_base_url is None:
                raise RuntimeError("the local model server has not been started")
            base_url: str | None = self.local_base_url
            key = SecretStr("local")
        else:
            base_url, key = resolve_endpoint(src, self.suite.backend.external, engine)
        return Endpoint(
            base_url=base_url,
            api_key=key,
            max_concurrency=self.concurrency_of(src),
            timeout=run.request_timeout,
            max_retries=run.max_retries,
            http_client=run.http_client,
        )

    def concurrency_of(self, src: Any) -> int:
        """Requests in flight to one endpoint (a ``[[models]]`` entry, ``[judge]`` or ``[user]``): its own
        ``max_concurrency``, else 1 for the local engine, else ``[run]``'s. Known before any server runs."""
        # The local server answers one request at a time: more in flight would only queue
        # there and eat into each request's timeout.
        default = 1 if (src.engine or "openai") == "local" else self.suite.run.concurrency
        return int(src.max_concurrency or default)

    def generation(self, bench: str, model: str) -> tuple[float, int]:
        """(temperature, max_tokens) by precedence benchmark > model > defaults > built-in."""
        e = self.benchmarks[bench].entry
        m = self.models[model]
        d = self.suite.defaults
        model_temperature = m.temperature if isinstance(m.temperature, (int, float)) else None
        temperature = (
            e.temperature
            if e.temperature is not None
            else model_temperature
            if model_temperature is not None
            else d.temperature
        )
        max_tokens = (
            e.max_tokens if e.max_tokens is not None else m.max_tokens if m.max_tokens is not None else d.max_tokens
        )
        return float(temperature), int(max_tokens)

    def sampling(self, bench: str, model: str) -> dict[str, Any]:
        """``top_p``, ``stop``, ``seed`` and the penalties, each by precedence benchmark > model > defaults
        (unset everywhere: not sent)."""
        return {**self.suite.defaults.sampling(), **self.models[model].sampling(),
                **self.benchmarks[bench].entry.sampling()}

    def settings(self, bench: str, model: str) -> RequestSettings:
        """What every request of this benchmark to this model carries, adapted to what the model accepts."""
        cached = self._settings.get((bench, model))
        if cached is not None:
            return cached
        temperature, max_tokens = self.generation(bench, model)
        m = self.models[model]
        params = self.sampling(bench, model)
        seed = params.pop("seed", None)  # sent as seed + the request's nonce: each repeat has its own
        self._settings[(bench, model)] = settings = adapt(
            m.name,
            temperature=temperature,
            max_tokens=max_tokens,
            token_param=m.token_param,
            temperature_override=m.temperature if "temperature" in m.model_fields_set else None,
            stream=m.stream,
            system_prompt=self.suite.defaults.system_prompt,
            seed=seed,
            params=params,
        )
        return settings

    def judge_settings(self, bench: str | None = None) -> RequestSettings | None:
        """The settings of the ``[judge]`` model (the benchmark's ``judge_model`` if it names one)."""
        cfg = self.suite.judge
        if cfg is None:
            return None
        name = (self.benchmarks[bench].entry.judge_model if bench is not None else None) or cfg.model
        return _helper_settings(cfg, name)

    def user_settings(self) -> RequestSettings | None:
        """The settings of the ``[user]`` model (the simulated user of multi-turn agent tasks), or None."""
        cfg = self.suite.user
        return _helper_settings(cfg, cfg.model) if cfg is not None else None

    def adaptations(self) -> list[str]:
        """One line per model (and judge) whose requests differ from the suite's settings, saying how."""
        notes: dict[str, list[str]] = {}
        for name in self.models:
            for bench in self.benchmarks:
                notes.setdefault(name, []).extend(self.settings(bench, name).adapted)
        for bench in self.benchmarks:
            judge = self.judge_settings(bench)
            if judge is not None:
                notes.setdefault(f"{judge.model} (judge)", []).extend(judge.adapted)
        lines = [f"{who}: {'; '.join(dict.fromkeys(found))}" for who, found in notes.items() if found]
        return lines + [f"{name}: {note}" for name, pb in self.benchmarks.items() for note in pb.notes]

    def request(self, bench: str, model: str, prompt: PromptLike, **options: Any) -> ChatRequest:
        """The chat request for ``prompt`` under this benchmark's and model's settings (see :func:`build_request`)."""
        return build_request(self.settings(bench, model), prompt, **options)

    def sample_prompt(self, bench: str, sample: Sample) -> PromptLike | None:
        """The benchmark's prompt of one sample, after its few-shot examples (``num_fewshot``); None: no call."""
        prompt = self.benchmarks[bench].benchmark.prompt(sample)
        shots = sample.metadata.get(FEWSHOT_IDS)
        if prompt is None or not shots:
            return prompt
        return with_examples(prompt, self.fewshot_pool(bench).messages(shots))

    def sample_request(self, bench: str, model: str, sample: Sample) -> ChatRequest | None:
        """The request the plugin sends (and prefetches) for one sample; None when it needs no call."""
        definition = self.benchmarks[bench].benchmark
        prompt = self.sample_prompt(bench, sample)
        if prompt is None:
            return None
        return self.request(bench, model, prompt, **{"nonce": repeat_nonce(sample), **definition.request_options})


def _helper_settings(cfg: Judge | UserModel, name: str) -> RequestSettings:
    """The settings of a helper model (``[judge]`` or ``[user]``): its own temperature (0 unless set)
    and token limit (1024 unless set), adapted to what ``name`` accepts."""
    temperature = cfg.temperature if isinstance(cfg.temperature, (int, float)) else 0.0
    return adapt(
        name,
        temperature=float(temperature),
        max_tokens=int(cfg.max_tokens or 1024),
        token_param=cfg.token_param,
        temperature_override=cfg.temperature if "temperature" in cfg.model_fields_set else None,
    )


def repeated(samples: list[Sample], repeats: int) -> list[Sample]:
    """Each sample ``repeats`` times, as ``<id>@1`` ... ``<id>@<repeats>`` (metadata ``repeat``, ``repeat_of``)."""
    import dataclasses

    return [
        dataclasses.replace(s, id=f"{s.id}@{r}", metadata={**s.metadata, "repeat": r, "repeat_of": s.id})
        for s in samples
        for r in range(1, repeats + 1)
    ]


def seeded_order(samples: list[Sample], seed: int) -> list[Sample]:
    """``samples`` in a seeded random order (episode mode's ``episode_order = "seeded"``)."""
    import numpy as np

    return [samples[int(i)] for i in np.random.default_rng(seed).permutation(len(samples))]


def _plan_sequence(path: Path, i: int, planned: PlannedBenchmark, suite: Suite) -> None:
    """Episode mode: does this benchmark run as a sequence per model (it keeps a memory, and it requires it
    or ``[run] episode_mode`` is on)? A benchmark without a memory never does; the suite is told so."""
    spec = planned.benchmark.agent
    where = f"invalid suite {path}:\n  benchmarks[{i}]"
    if spec is not None and spec.sequential and spec.memory is None:
        raise SuiteError(f"{where}.name: {planned.entry.name!r} requires episode mode but defines no "
                         "AgentSpec.memory (a bug in the benchmark)")
    wanted = suite.run.episode_mode or (spec is not None and spec.sequential)
    if not wanted:
        return
    if spec is None or spec.memory is None or not planned.is_agent:
        planned.notes.append("keeps no memory between episodes: [run] episode_mode does not apply to it")
        return
    if planned.is_external:
        raise SuiteError(f"{where}.backend: episode mode runs the built-in episode loop; the {planned.backend!r} "
                         "backend cannot be given a memory")
    if suite.run.trajectories == "off":
        raise SuiteError(f"invalid suite {path}:\n  run.trajectories: episode mode rebuilds an episode's memory "
                         f"from stored trajectories (--jeval-resume, -k), and {planned.entry.key!r} runs in "
                         'episode mode; use "sidecar" or "inline"')
    planned.sequential = True


def _check_judge_repeats(path: Path, i: int, planned: PlannedBenchmark, judge: Judge | None) -> None:
    """``judge_repeats`` needs a ``[judge]`` and a benchmark whose scorer replays judge replies."""
    where = f"invalid suite {path}:\n  benchmarks[{i}].judge_repeats"
    if planned.entry.evaluator:
        raise SuiteError(f"{where}: a judge benchmark repeats its evaluator with repeats = N")
    if judge is None:
        raise SuiteError(f"{where}: needs a [judge] table")
    from pytest_jeval.scoring.registry import SCORERS

    scorer = planned.benchmark.scorer
    if scorer not in SCORERS or not SCORERS.get(scorer).uses_judge:
        raise SuiteError(f"{where}: {planned.entry.name!r} is not scored by a judge whose verdicts can be replayed "
                         f"(its scorer {scorer!r} is not registered with uses_judge=True)")


def _plan_judge_validation(suite: Suite, path: Path,
                           benchmarks: dict[str, PlannedBenchmark]) -> tuple[BenchmarkEntry, list[Path]]:
    """The gold set of ``[judge] validate``: a judge benchmark of the suite, or a gold file with
    ``validate_evaluator``; checked here (the file, the evaluator, that it asks the model)."""
    from pytest_jeval.scoring.judging.registry import JudgeSetupError
    from pytest_jeval.suite.catalog import judge_template

    judge = suite.judge
    assert judge is not None and judge.gold_set is not None
    planned = benchmarks.get(judge.gold_set)
    if planned is not None and planned.entry.evaluator:
        entry, files, key = planned.entry, list(planned.files), "validate"
    else:
        file = _relative(path, judge.gold_set)
        if not file.is_file():
            entries = [k for k, pb in benchmarks.items() if pb.entry.evaluator]
            named = f" (its judge benchmarks: {', '.join(entries)})" if entries else ""
            raise SuiteError(f"invalid suite {path}:\n  judge.validate: {judge.gold_set!r} is neither the key of a "
                             f"[[benchmarks]] entry with evaluator = ...{named} nor a gold file: {file} not found")
        entry = BenchmarkEntry(name="judge-validation", evaluator=judge.validate_evaluator, data_files=str(file))
        files, key = [file], "validate_evaluator"
    template, _module = judge_template()
    assert template.configure is not None
    try:
        template.configure(entry)
        from pytest_jeval.scoring.judging.registry import get_evaluator

        evaluator = get_evaluator(str(entry.evaluator))
    except (JudgeSetupError, KeyError) as exc:
        raise SuiteError(f"invalid suite {path}:\n  judge.{key}: {exc}") from None
    if not evaluator.uses_model:
        raise SuiteError(f"invalid suite {path}:\n  judge.{key}: the evaluator {evaluator.name!r} asks no model, so it "
                         "cannot validate the judge; use one that asks the model (closed_qa, answer_correctness, ...)")
    return entry, files


def _relative(suite_path: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else suite_path.parent / p


def _check_model(path: Path, i: int, m: ModelEntry) -> None:
    if m.api_key_env and m.api_key_env not in os.environ:
        raise SuiteError(
            f"invalid suite {path}:\n  models[{i}].api_key_env: environment variable {shown_env_name(m.api_key_env)} "
            "is not set"
        )
    if m.model_path and m.engine != "local":
        raise SuiteError(f'invalid suite {path}:\n  models[{i}].model_path: only valid with engine = "local"')
    if m.model_path and not _relative(path, m.model_path).is_file():
        raise SuiteError(
            f"invalid suite {path}:\n  models[{i}].model_path: file not found: {_relative(path, m.model_path)}"
        )


def _import_module(path: Path, i: int, entry: BenchmarkEntry) -> ModuleType:
    spec_text = entry.module or ""
    where = f"benchmarks[{i}].module"
    if spec_text.endswith(".py") or "/" in spec_text or os.sep in spec_text:
        file = _relative(path, spec_text)
        if not file.is_file():
            raise SuiteError(f"invalid suite {path}:\n  {where}: file not found: {file}")
        mod_name = f"jeval_user_bench_{entry.name.replace('-', '_')}"
        if mod_name in sys.modules and getattr(sys.modules[mod_name], "__file__", None) == str(file):
            return sys.modules[mod_name]
        spec = importlib.util.spec_from_file_location(mod_name, file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[mod_name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            del sys.modules[mod_name]
            raise SuiteError(
                f"invalid suite {path}:\n  {where}: importing {file} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return module
    try:
        return importlib.import_module(spec_text)
    except ImportError as exc:
        raise SuiteError(f"invalid suite {path}:\n  {where}: cannot import {spec_text!r}: {exc}") from exc


def _data_files(path: Path, i: int, entry: BenchmarkEntry, key: str = "data_files") -> list[Path]:
    """``data_files`` (or ``fewshot_files``) resolved against the suite file; a missing file is a SuiteError."""
    files = []
    given = getattr(entry, key)
    for j, f in enumerate(entry.data_file_list if key == "data_files" else entry.fewshot_file_list):
        p = _relative(path, f)
        if not p.is_file():
            suffix = f"[{j}]" if isinstance(given, list) else ""
            raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].{key}{suffix}: file not found: {p}")
        files.append(p)
    return files


def _plan_judge_benchmark(path: Path, i: int, entry: BenchmarkEntry) -> PlannedBenchmark:
    from pytest_jeval.scoring.judging.registry import JudgeSetupError
    from pytest_jeval.suite.catalog import judge_template

    if not entry.data_file_list:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].data_files: a judge benchmark needs a gold set")
    for key in ("data_dir", "options", "num_fewshot", "fewshot_files"):
        if getattr(entry, key):
            raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].{key}: a judge benchmark takes no {key}")
    files = _data_files(path, i, entry)
    try:
        if entry.database is not None:
            db = _relative(path, entry.database)
            if not db.is_file():
                raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].database: file not found: {db}")
            entry = entry.model_copy(update={"database": str(db)})  # the resolved path lives on the plan's copy
        template, module = judge_template()
        assert template.configure is not None
        bench = template.configure(entry)
    except JudgeSetupError as exc:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].{exc.key}: {exc}") from None
    return PlannedBenchmark(entry=entry, benchmark=bench, module=module, files=files)


def _plan_benchmark(path: Path, i: int, entry: BenchmarkEntry) -> PlannedBenchmark:
    if entry.evaluator:
        return _plan_judge_benchmark(path, i, entry)
    for key in ("kind", "scale"):
        if getattr(entry, key) is not None:
            raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].{key}: only valid with evaluator = ...")
    if entry.database is not None:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].database: only valid with evaluator = ...")
    if entry.module:
        module = _import_module(path, i, entry)
    else:
        from pytest_jeval.suite.catalog import CatalogError, benchmark_index, builtin_module

        mod_name = builtin_module(entry.name)  # one import instead of the whole catalog's
        if mod_name is None:
            try:
                index = benchmark_index()
            except CatalogError as exc:
                raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].name: {exc}") from None
            mod_name = index.get(entry.name)
        if mod_name is None:
            from pytest_jeval.suite.catalog import close_names

            known = ", ".join(sorted(index))
            close = close_names(entry.name, index)
            hint = f"did you mean {' or '.join(repr(n) for n in close)}? " if close else ""
            raise SuiteError(
                f"invalid suite {path}:\n  benchmarks[{i}].name: unknown benchmark {entry.name!r}; {hint}"
                f'known benchmarks are: {known} (or set module = "path/to/bench.py" for your own)'
            )
        try:
            module = importlib.import_module(mod_name)
        except Exception as exc:
            raise SuiteError(
                f"invalid suite {path}:\n  benchmarks[{i}].name: {entry.name!r} ({mod_name}) failed to "
                f"import: {type(exc).__name__}: {exc}"
            ) from exc
    try:
        bench = find_benchmark(module)
    except ValueError as exc:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}]: {exc}") from None
    if bench is None:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].module: {module.__name__} defines no Benchmark")
    if bench.name != entry.name:
        if entry.module or entry.name not in bench.aliases:
            raise SuiteError(
                f"invalid suite {path}:\n  benchmarks[{i}].name: {entry.name!r} does not match the module's "
                f"Benchmark name {bench.name!r}"
            )
        # an alias runs the benchmark under its own name; the alias stays the entry's key (its label)
        entry = entry.model_copy(update={"name": bench.name, "label": entry.label or entry.name})
    backend, notes = _backend(path, i, entry, bench)
    if entry.sandbox is not None and entry.sandbox not in bench.sandboxes:
        allowed = f"it takes {', '.join(repr(s) for s in bench.sandboxes)}" if bench.sandboxes else "it runs no sandbox"
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].sandbox: {entry.sandbox!r} is not a sandbox of "
                         f"{entry.name!r} ({allowed})")
    from pytest_jeval.suite.fewshot import check_entry

    refused = check_entry(f"invalid suite {path}:\n  benchmarks[{i}]", entry, bench, backend)
    if refused is not None:
        raise SuiteError(refused)
    if entry.num_fewshot and bench.fewshot is not None:
        notes.append(f"num_fewshot = {entry.num_fewshot}: that many worked examples from its "
                     f"{bench.fewshot.split!r} split before each question ({bench.fewshot.sampler})")
    files = _data_files(path, i, entry)
    if not files:
        files = bench.default_files(module.__file__)
        if not files and bench.dataset is None and bench.read_rows is None:
            raise SuiteError(
                f"invalid suite {path}:\n  benchmarks[{i}].data_files: {entry.name!r} needs local data files"
            )
    from pytest_jeval.suite.options import OptionsError, check_data_dir, validate_options

    try:
        local_dir = check_data_dir(entry.data_dir, benchmark=entry.name, layout=bench.data_dir, suite_dir=path.parent)
    except OptionsError as exc:
        raise SuiteError(f"invalid suite {path}:\n  benchmarks[{i}].data_dir: {exc}") from None
    try:
        options = validate_options(bench.options, entry.options, benchmark=entry.name, suite_dir=path.parent)
    except OptionsError as exc:
        lines = "\n".join(f"  benchmarks[{i}].options.{line}" for line in str(exc).splitlines())
        raise SuiteError(f"invalid suite {path}:\n{lines}") from None
    return PlannedBenchmark(entry=entry, benchmark=bench, module=module, files=files, backend=backend, notes=notes,
                            options=options, local_dir=local_dir,
                            fewshot_files=_data_files(path, i, entry, key="fewshot_files"))


def _external_backend(where: str, entry: BenchmarkEntry, bench: Benchmark, backend: str) -> str:
    """An external agent backend, checked: the benchmark runs as an agent, ``command`` only with
    ``backend = "command"``, and the agent is usable here (else the message says how to install it)."""
    from pytest_jeval.agents.external.base import BackendOptions, get_agent

    if entry.command is not None and backend != "command":
        raise SuiteError(f'{where}.command: only valid with backend = "command"')
    if backend == "command" and entry.command is None:
        raise SuiteError(f'{where}.command: backend = "command" needs command = ["my-agent", "--prompt-file", '
                         '"{prompt_file}"]')
    if "agent" not in bench.backends:
        runs = " or ".join(repr(b) for b in bench.backends)
        raise SuiteError(f"{where}.backend: {entry.name!r} cannot run as {backend!r}: an external agent needs a "
                         f"benchmark that runs as an agent (it runs as {runs})")
    if bench.agent is not None and bench.agent.no_external:
        raise SuiteError(f"{where}.backend: {entry.name!r} cannot run with the {backend} agent: "
                         f"{bench.agent.no_external}")
    if entry.tools:
        raise SuiteError(f"{where}.tools: the {backend} agent brings its own tools; remove tools")
    try:
        agent = get_agent(backend, BackendOptions(benchmark=entry.key, command=tuple(entry.command or ())))
    except KeyError as exc:
        raise SuiteError(f"{where}.backend: {exc.args[0]}") from None
    from pytest_jeval.agents.external.episode import containment_problem

    problem = agent.check() or containment_problem()
    if problem is not None:
        raise SuiteError(f"{where}.backend: the {backend} agent cannot run here: {problem}")
    return backend


def _backend(path: Path, i: int, entry: BenchmarkEntry, bench: Benchmark) -> tuple[str, list[str]]:
    """The backend a benchmark runs with, checked against what it supports and the agent keys set."""
    where = f"invalid suite {path}:\n  benchmarks[{i}]"
    backend = entry.backend_kind or ("agent" if entry.agent is not None else bench.backends[0])
    if entry.agent is not None and backend != "agent":
        raise SuiteError(f"{where}.agent: a named agent drives the built-in episode loop; remove agent or set "
                         f'backend = "agent" (the {backend!r} backend runs as it is)')
    if backend not in ("direct", "agent") or entry.command is not None:
        return _external_backend(where, entry, bench, backend), []
    if backend not in bench.backends:
        runs = " or ".join(repr(b) for b in bench.backends)
        raise SuiteError(f"{where}.backend: {entry.name!r} cannot run as {backend!r} (it runs as {runs})")
    notes: list[str] = []
    if backend != "agent":
        for key in ("tools", "max_turns"):
            if key in entry.model_fields_set and getattr(entry, key):
                raise SuiteError(f'{where}.{key}: only valid with backend = "agent"')
        return backend, notes
    from pytest_jeval.agents.tools import TOOLS

    for j, name in enumerate(entry.tools):
        if name not in TOOLS:
            raise SuiteError(f"{where}.tools[{j}]: unknown tool {name!r}; {TOOLS.known_text()}")
    if len(set(entry.tools)) != len(entry.tools):
        raise SuiteError(f"{where}.tools: a tool is named twice")
    if entry.tools and bench.agent is not None and bench.agent.tools:
        notes.append(f"defines its own tools; tools = {entry.tools!r} is not used")
    spec_turns = bench.agent.max_turns if bench.agent is not None else None
    if entry.max_turns and spec_turns is not None and entry.max_turns > spec_turns:
        notes.append(f"runs at most {spec_turns} turns per episode (max_turns = {entry.max_turns} asked for more)")
    _check_agent(where, entry, bench)
    return backend, notes


def _check_agent(where: str, entry: BenchmarkEntry, bench: Benchmark) -> None:
    """The named agent can run this benchmark (else the message names the agents that can)."""
    from pytest_jeval.agents.named import AGENTS, DEFAULT_AGENT
    from pytest_jeval.agents.spec import AgentSpec

    name = entry.agent or DEFAULT_AGENT
    spec = bench.agent or AgentSpec()
    reason = AGENTS.get(name).refuses(spec)
    if reason is not None:
        able = [n for n, agent in AGENTS.items() if agent.refuses(spec) is None]
        raise SuiteError(f"{where}.agent: {entry.name!r} cannot run with the {name!r} agent: {reason}; the agents "
                         f"it runs with are: {', '.join(able)}")


def shown_env_name(name: str) -> str:
    """An ``api_key_env`` name as a message may quote it: a conventional variable name (capitals, digits, ``_``)
    is shown; anything else may be a key pasted there, and is not."""
    import re

    if re.fullmatch(r"[A-Z_][A-Z0-9_]{0,63}", name):
        return repr(name)
    return "(the name given is not spelled like a variable name and may be a key: not shown)"
