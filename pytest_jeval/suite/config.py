"""The suite file: TOML parsed once and validated into pydantic models.

Precedence for generation settings is benchmark > model > ``[defaults]`` > built-in.
Every model forbids unknown keys, so a misspelled key is an error that names the
file and the key path instead of being silently dropped.
"""

from __future__ import annotations

import math
import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from pytest_jeval.calls.engines import ENGINES
from pytest_jeval.core.paths import benchmark_name_problem, colliding_pairs, model_slug

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

class SuiteError(Exception):
    """A suite file that cannot be used; the message names the file and the key path."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_default=True)


BACKEND_ALIASES = {"direct": "direct", "jarvis-direct": "direct", "agent": "agent", "jarvis-agent": "agent"}
"""The built-in backends' spellings, and the backend each means; every external agent backend
(:data:`~pytest_jeval.agents.external.BACKENDS`) is a backend under its own name too."""


def backend_names() -> list[str]:
    """Every backend a suite may name: the built-in spellings, then the external agent backends."""
    from pytest_jeval.agents.external.base import BACKENDS

    return [*BACKEND_ALIASES, *(n for n in BACKENDS.names() if n not in BACKEND_ALIASES)]


class Meta(_Strict):
    """``[meta]``: suite metadata shown in output and summaries."""

    name: str = ""
    """Suite name."""
    description: str = ""
    """Human-readable description."""


def _temperature(value: Any) -> float | str | None:
    """A model entry's ``temperature``: a finite number >= 0, or ``"omit"`` (never sent)."""
    if value is None or value == "omit":
        return "omit" if value is not None else None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f'temperature must be a number >= 0 or "omit", got {value!r}')
    if math.isnan(value) or math.isinf(value) or value < 0:
        raise ValueError(f"temperature must be a finite number >= 0, got {value!r}")
    return float(value)


SAMPLING_KEYS = ("top_p", "stop", "seed", "presence_penalty", "frequency_penalty")
"""The request parameters ``[defaults]``, ``[[models]]`` and ``[[benchmarks]]`` may set besides the temperature
and token limit, with the same precedence (benchmark > model > defaults); unset ones are not sent."""


class _Sampling(_Strict):
    """The sampling parameters sent with every request (unset: not sent, the server's default)."""

    top_p: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    """Nucleus sampling: the probability mass the tokens are drawn from (0 to 1)."""
    stop: str | list[str] | None = None
    """Up to 4 sequences where the endpoint stops generating (a string or a list)."""
    seed: int | None = Field(None, ge=0)
    """Sent as the ``seed`` of every request to the models under test (best-effort determinism where the
    endpoint honours it); the n-th repeat of a sample sends ``seed + n - 1``. Unset: no seed is sent.
    Not ``[run] seed`` (the subset's)."""
    presence_penalty: float | None = Field(None, ge=-2, le=2, allow_inf_nan=False)
    """Penalty on tokens already present (-2 to 2)."""
    frequency_penalty: float | None = Field(None, ge=-2, le=2, allow_inf_nan=False)
    """Penalty by how often a token already appears (-2 to 2)."""

    @field_validator("stop")
    @classmethod
    def _stop_sequences(cls, value: str | list[str] | None) -> str | list[str] | None:
        sequences = [value] if isinstance(value, str) else value or []
        if value is not None and not sequences:
            raise ValueError("stop is an empty list; leave it out to send none")
        if len(sequences) > 4:
            raise ValueError(f"stop takes at most 4 sequences (the OpenAI API's limit), got {len(sequences)}")
        if any(not s for s in sequences):
            raise ValueError("a stop sequence is empty")
        return value

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters this table sets (the others are left to a lower table)."""
        return {k: getattr(self, k) for k in SAMPLING_KEYS if getattr(self, k) is not None}


class Defaults(_Sampling):
    """``[defaults]``: generation settings for every model and benchmark."""

    temperature: float = Field(0.0, ge=0, allow_inf_nan=False)
    """Sampling temperature."""
    max_tokens: int = Field(2048, gt=0)
    """Maximum output tokens."""
    system_prompt: str | None = None
    """A system message prepended to every prompt."""


class _Endpoint(_Strict):
    """Fields shared by ``[[models]]`` and ``[judge]`` for reaching an endpoint."""

    engine: str | None = None
    """A registered engine (:data:`~pytest_jeval.calls.engines.ENGINES`): ``openai`` (default; also ``vllm``,
    ``sglang``, ``ollama``, ``llamacpp``, ``cloud``), ``local``, or one an installed package registers."""
    provider: str | None = None
    """Provider hint (informational; every remote engine uses the OpenAI protocol)."""
    base_url: str | None = None
    """OpenAI-compatible endpoint URL, e.g. ``http://gpu-node:8000/v1``."""
    api_key: SecretStr | None = None
    """API key. Prefer ``api_key_env`` so the key stays out of the suite file."""
    api_key_env: str | None = None
    """Name of an environment variable holding the API key."""
    temperature: float | Literal["omit"] | None = None
    """Overrides ``[defaults].temperature``; ``"omit"`` never sends one. A number is sent even
    to a reasoning model (gpt-5*, o1*, o3*, o4*), whose temperature is otherwise left out."""
    max_tokens: int | None = Field(None, gt=0)
    """Overrides ``[defaults].max_tokens``."""
    token_param: Literal["max_tokens", "max_completion_tokens"] | None = None
    """The parameter that carries the token limit; by default ``max_completion_tokens`` for
    reasoning models, ``max_tokens`` for the others."""
    max_concurrency: int | None = Field(None, gt=0)
    """Requests in flight to this endpoint from one pytest process (overrides ``[run]``)."""
    model_path: str | None = None
    """``engine = "local"`` only: a GGUF file to load instead of the bundled SmolLM2."""
    price_in_per_mtok: float | None = Field(None, ge=0, allow_inf_nan=False)
    """USD per million prompt tokens (overrides the built-in price table)."""
    price_out_per_mtok: float | None = Field(None, ge=0, allow_inf_nan=False)
    """USD per million completion tokens (overrides the built-in price table)."""

    @field_validator("temperature", mode="before")
    @classmethod
    def _finite_temperature(cls, value: Any) -> float | str | None:
        return _temperature(value)

    @field_validator("engine")
    @classmethod
    def _known_engine(cls, value: str | None) -> str | None:
        if value is not None and value not in ENGINES:
            raise ValueError(f"unknown engine {value!r}; {ENGINES.known_text()}")
        return value

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        return _url_without_credentials(value)

    @field_validator("api_key_env")
    @classmethod
    def _a_variable_name(cls, value: str | None) -> str | None:
        return _env_name(value)

    @model_validator(mode="after")
    def _one_key_source(self) -> _Endpoint:
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("set either api_key or api_key_env, not both")
        return self


class Judge(_Endpoint):
    """``[judge]``: the model used for LLM-as-judge scoring and answer-extraction fallbacks."""

    model: str = "gpt-5-mini-2025-08-07"
    """Judge model id sent to the endpoint."""
    temperature: float | Literal["omit"] | None = 0.0
    max_tokens: int | None = Field(1024, gt=0)
    gold_set: str | None = Field(None, alias="validate")
    """``validate``: a gold set the judge must pass before it judges any sample: the key of a ``[[benchmarks]]``
    entry with ``evaluator = ...`` (its evaluator, gold set, kind and scale), or a gold file (relative to the suite
    file) judged with ``validate_evaluator``. The judge runs on it first (through the judge-benchmark
    machinery, cached); its figures go into every summary it judged (docs/judges.md)."""
    validate_evaluator: str = "closed_qa"
    """The evaluator of a ``validate`` gold file (one that asks the model: ``closed_qa``, ``answer_correctness``,
    ``pairwise``, ...)."""
    validate_samples: int | None = Field(None, gt=0)
    """At most this many gold items (a seeded subset, ``[run] seed``); default: all."""
    min_kappa: float | None = Field(None, ge=-1.0, le=1.0, allow_inf_nan=False)
    """The judge's Cohen's kappa against the gold labels must reach this, else the run stops (usage error)."""
    min_accuracy: float | None = Field(None, ge=0.0, le=1.0, allow_inf_nan=False)
    """The judge's accuracy against the gold labels must reach this, else the run stops (usage error)."""

    @model_validator(mode="after")
    def _floors_need_a_gold_set(self) -> Judge:
        for key in ("min_kappa", "min_accuracy", "validate_samples"):
            if getattr(self, key) is not None and self.gold_set is None:
                raise ValueError(f'{key} needs validate = "<judge benchmark or gold file>"')
        return self

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str) -> str:
        return _model_id(value)


class UserModel(_Endpoint):
    """``[user]``: the model that plays the user in multi-turn agent tasks (retail)."""

    model: str
    """User-simulator model id sent to the endpoint."""
    temperature: float | Literal["omit"] | None = 0.0
    max_tokens: int | None = Field(1024, gt=0)

    @field_validator("model")
    @classmethod
    def _model_id(cls, value: str) -> str:
        return _model_id(value)


class ModelEntry(_Endpoint, _Sampling):
    """``[[models]]``: one model under evaluation (its sampling parameters override ``[defaults]``)."""

    name: str = Field(min_length=1)
    """Model id sent to the server (must match ``GET /v1/models``)."""
    label: str | None = None
    """Distinguishes two entries of the same model (two temperatures): the entry's key in test ids,
    file names and tables is ``label`` (else ``name``); requests still send ``name``."""

    @field_validator("name")
    @classmethod
    def _model_id(cls, value: str) -> str:
        return _model_id(value)

    @field_validator("label")
    @classmethod
    def _safe_label(cls, value: str | None) -> str | None:
        return _label(value)

    stream: bool = False
    """Stream responses, which gives time-to-first-token."""
    param_count_b: float = 0.0
    """Total parameters in billions (for MFU/MBU)."""
    active_params_b: float | None = None
    """Active parameters per token in billions (MoE); defaults to ``param_count_b``."""
    gpu_peak_tflops: float = 0.0
    """GPU peak FP16 TFLOPS."""
    gpu_peak_bandwidth_gb_s: float = 0.0
    """GPU peak memory bandwidth in GB/s."""
    num_gpus: int = Field(1, ge=1)
    """GPUs used for tensor-parallel inference."""

    @property
    def key(self) -> str:
        """The entry's key in the suite: its ``label``, else its ``name``."""
        return self.label or self.name

    @property
    def slug(self) -> str:
        """The entry's key made safe for file names and test ids."""
        return model_slug(self.key)


def _label(value: str | None) -> str | None:
    """A ``label``: part of test ids and file names, so it follows the benchmark-name rule."""
    if value is not None:
        problem = benchmark_name_problem(value)
        if problem is not None:
            raise ValueError(problem.replace("as a file name", "as a label (it is part of file names and test ids)"))
    return value


def _model_id(value: str) -> str:
    """A model id as sent to the endpoint: not blank, no surrounding whitespace."""
    if not value.strip():
        raise ValueError("model name is blank")
    if value != value.strip():
        raise ValueError(f"model name {value!r} has leading or trailing whitespace")
    return value


class BenchmarkEntry(_Sampling):
    """``[[benchmarks]]``: one benchmark of the matrix (its sampling parameters override the model's)."""

    name: str = Field(min_length=1)
    """A built-in benchmark key, or the name of the benchmark defined in ``module``."""
    label: str | None = None
    """Distinguishes two entries of the same benchmark (two subsets, two temperatures): the entry's key
    in test ids, file names and tables is ``label`` (else ``name``); the benchmark is still found by ``name``."""
    module: str | None = None
    """A user benchmark: a ``.py`` path (relative to the suite file) or a dotted module name."""
    backend: str | None = None
    """``direct`` (one chat call per sample) or ``agent`` (a tool-calling episode per sample);
    the ``jarvis-`` spellings are aliases. ``hermes``, ``openclaw``, ``command`` and any backend a
    package registers run an external agent CLI per sample behind a recording proxy
    (docs/external-agents.md). Default: the benchmark's own (direct where it can)."""
    command: list[str] | None = None
    """``backend = "command"`` only: the agent's command line, with the placeholders ``{prompt_file}``,
    ``{workspace}``, ``{model}`` and ``{base_url}``."""
    max_samples: int | None = Field(None, gt=0)
    """Evaluate a seeded random subset of this size (ids stay stable)."""
    split: str | None = None
    """Override the dataset split."""
    subset: str | None = None
    """Dataset subset/config (benchmark-specific)."""
    record_ids: list[str] | None = None
    """Evaluate only these record ids."""
    data_files: str | list[str] | None = None
    data_dir: str | None = None
    """A local copy of the benchmark's data in its upstream layout (a checkout, an unpacked archive), relative
    to the suite file; what it must hold is the benchmark's own (``jeval list``, its docs page)."""
    options: dict[str, Any] = Field(default_factory=dict)
    """``[benchmarks.options]``: the benchmark's own settings, checked against the ones it declares
    (``Benchmark.options``); a key it does not declare is refused with the ones it does."""
    """Local copies of the dataset in the hub schema, relative to the suite file."""
    num_fewshot: int | None = Field(None, ge=0)
    """Direct benchmarks with a few-shot source (``Benchmark.fewshot``): send this many worked examples from it
    as user/assistant turns before each question, the same ones for every sample (docs/configuration.md)."""
    fewshot_files: str | list[str] | None = None
    """A local copy of the few-shot split in the Hub's schema (relative to the suite file), instead of the Hub."""
    judge_model: str | None = None
    """Override ``[judge].model`` for this benchmark."""
    temperature: float | None = Field(None, ge=0, allow_inf_nan=False)
    """Highest-precedence temperature."""
    max_tokens: int | None = Field(None, gt=0)
    """Highest-precedence max tokens."""
    min_accuracy: float | None = Field(None, ge=0.0, le=1.0)
    """Gate: every model must reach this accuracy on this benchmark."""
    evaluator: str | None = None
    """Judge benchmark: the evaluator under test (``exact_match``, ``factuality``, ...);
    ``data_files`` then holds the gold set."""
    kind: Literal["boolean", "choice", "score"] | None = None
    """Judge benchmark: the case kind, where the evaluator does not fix it."""
    scale: list[float] | None = None
    """Judge benchmark: the score scale as ``[low, high]`` (e.g. ``[0, 4]``), where the evaluator does not fix it."""
    judge_repeats: int = Field(1, ge=1)
    """Ask the ``[judge]`` each of its questions this many times (the model's answer asked once): the first
    verdict counts, and the summary reports the judge's self-consistency (``judge_repeats``), judge noise apart
    from model noise. For benchmarks whose scorer replays judge replies (``Benchmark.scorer``, ``uses_judge``)."""
    repeats: int = Field(1, ge=1)
    """Run each sample this many times, each run its own request (ids ``<id>@<n>``), and report the repeat
    statistics (pass@k, pass^k, mean and standard error over repeats, majority vote, flip rate). Judge
    benchmark: run the evaluator this many times per item and report consistency."""
    database: str | None = None
    """Judge benchmark with ``evaluator = "sql"``: the SQLite database (relative to the suite file)."""
    agent: str | None = None
    """The named agent that drives each episode (``orchestrator``, the default; ``oracle``, ``nop``, or one a
    package registers; ``jeval list`` shows them); implies ``backend = "agent"``."""
    tools: list[str] = Field(default_factory=list)
    """Built-in tools offered to the agent (``calculator``, ``file_read``, ``list_files``, ``file_write``,
    ``python``, ``bash``); benchmarks that define their own tools ignore it."""
    max_turns: int | None = Field(None, gt=0)
    """Model turns per episode for this benchmark (overrides ``[run] max_turns``)."""
    sandbox: str | None = None
    """The sandbox provider of a benchmark that runs one (``terminal_lite``: ``bubblewrap``, the default,
    or ``docker``, untested here); refused for benchmarks that run none."""

    @property
    def backend_kind(self) -> str | None:
        """``direct``, ``agent`` (aliases resolved) or an external backend's name; None when the suite sets none."""
        return BACKEND_ALIASES.get(self.backend, self.backend) if self.backend is not None else None

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str | None) -> str | None:
        names = backend_names()
        if value is not None and value not in names:
            raise ValueError(f"unknown backend {value!r}; the backends are: {', '.join(names)}")
        return value

    @field_validator("agent")
    @classmethod
    def _known_agent(cls, value: str | None) -> str | None:
        from pytest_jeval.agents.named import AGENTS

        if value is not None and value not in AGENTS:
            raise ValueError(f"unknown agent {value!r}; {AGENTS.known_text()}")
        return value

    @field_validator("name")
    @classmethod
    def _safe_name(cls, value: str) -> str:
        problem = benchmark_name_problem(value)
        if problem is not None:
            raise ValueError(problem)
        return value

    @field_validator("label")
    @classmethod
    def _safe_label(cls, value: str | None) -> str | None:
        return _label(value)

    @property
    def key(self) -> str:
        """The entry's key in the suite: its ``label``, else its ``name``."""
        return self.label or self.name

    @property
    def fewshot_file_list(self) -> list[str]:
        """``fewshot_files`` as a list."""
        if self.fewshot_files is None:
            return []
        return [self.fewshot_files] if isinstance(self.fewshot_files, str) else list(self.fewshot_files)

    @property
    def data_file_list(self) -> list[str]:
        """``data_files`` as a list."""
        if self.data_files is None:
            return []
        return [self.data_files] if isinstance(self.data_files, str) else list(self.data_files)


class Run(_Strict):
    """``[run]``: execution settings for the whole suite."""

    output_dir: str = "results/"
    """Where JSONL and summary files go (a relative path is taken from the directory pytest runs in)."""
    output_file: str | None = None
    """The JSONL of a suite's one (benchmark, model) pair, instead of ``{benchmark}_{model}.jsonl`` (the reference's
    ``-o FILE.jsonl``): its summary goes beside it (``{file}.summary.json``); its folder is the output directory."""
    seed: int = Field(42, ge=0)
    """Seed for the ``max_samples`` subset and option shuffles."""
    max_concurrency: int | None = Field(None, gt=0)
    """Requests in flight to one endpoint from one pytest process (default 32)."""
    max_workers: int | None = Field(None, gt=0)
    """Reference-suite spelling of ``max_concurrency``; used when that is unset."""
    max_retries: int = Field(4, ge=0)
    """Retries on 429, 5xx, timeouts and connection errors."""
    request_timeout: float = Field(120.0, gt=0, allow_inf_nan=False)
    """Seconds one HTTP attempt may take as a whole, from sending to the reply's last byte."""
    cache_dir: str | None = None
    """Response cache location (default ``<output_dir>/.cache``)."""
    cache: bool = True
    """Use the on-disk response cache."""
    call_executor: Literal["auto", "thread", "process"] = "auto"
    """Where each pytest process runs its HTTP client: a background thread, or a helper
    process with its own GIL; ``auto`` picks the process for large, concurrent runs."""
    http_client: Literal["auto", "aiohttp", "httpx"] = "auto"
    """The HTTP transport under the openai client: openai's aiohttp transport, or its default
    httpx one; ``auto`` takes aiohttp where the installed openai offers it."""
    max_error_rate: float | None = Field(None, ge=0.0, le=1.0)
    """Gate: the share of errored samples per model x benchmark must not exceed this."""
    max_cost_usd: float | None = Field(None, gt=0, allow_inf_nan=False)
    """The run budget in USD, judge and user-simulator calls included (records kept by ``--jeval-resume``
    count with their recorded cost): no call starts once it could take the run past it; the items left
    are recorded as "budget exhausted" errors and the exit status is 6. Every model the run calls needs a
    known price (the price table, or ``price_in_per_mtok``/``price_out_per_mtok``)."""
    max_total_tokens: int | None = Field(None, gt=0)
    """The run budget in tokens (prompt plus completion, every call), with ``max_cost_usd``'s rules."""
    max_exec_workers: int | None = Field(None, gt=0)
    """Parallel sandboxed code executions (default: number of cores)."""
    telemetry: bool = False
    """Measure GPU energy and utilisation around model calls (NVML)."""
    gpu_metrics: bool = False
    """Alias of ``telemetry`` kept for reference suites."""
    gpu_devices: list[int] | None = None
    """GPU indices to measure (default: all visible, honouring CUDA_VISIBLE_DEVICES)."""
    warmup_samples: int = Field(0, ge=0)
    """Untimed calls per model before its first measured one, in every process that calls it: not
    records, not cached, not counted in latency or energy (docs/exports.md)."""
    energy_vendor: Literal["", "nvidia"] = ""
    """Energy measurement vendor: ``"nvidia"`` (NVML), the only one supported."""
    max_turns: int | None = Field(None, gt=0)
    """Model turns per agent episode (default 10; a benchmark may cap it lower)."""
    max_tool_calls: int = Field(50, gt=0)
    """Tool calls per agent episode; past it the episode stops (``stop_reason = "max_tool_calls"``)."""
    max_episode_tokens: int | None = Field(None, gt=0)
    """Prompt plus completion tokens per episode (``token_limit``); unlimited by default."""
    episode_timeout: float = Field(600.0, gt=0, allow_inf_nan=False)
    """Wall-clock seconds per episode (``time_limit``)."""
    tool_timeout: float = Field(30.0, gt=0, allow_inf_nan=False)
    """Seconds one tool call may run (sandboxed tools are killed past it)."""
    max_tool_output: int = Field(16_000, ge=200)
    """Characters of one tool result sent to the model; longer output keeps its head and tail."""
    max_episodes_in_flight: int | None = Field(None, gt=0)
    """Open agent episodes per pytest process (each holds a workspace); default twice the concurrency, at least 64."""
    trajectories: Literal["sidecar", "inline", "off"] = "sidecar"
    """Where agent trajectories go: ``{jsonl}.trajectories.jsonl``, inside each record, or nowhere."""
    episode_mode: bool = False
    """Episode mode: the samples of each benchmark that keeps a memory (``AgentSpec.memory``) run as one
    sequence per model, each episode remembering earlier ones (docs/agents.md, "Episode mode"); others
    run as usual. A benchmark that requires it (``lifelong-agent``) runs so without this key."""
    episode_memory: str = "recent-successes"
    """Episode mode: the memory policy: ``recent-successes`` (the last ``episode_memory_size`` correct
    episodes, as LifelongAgentBench), ``recent`` (the last ones, whatever their verdict) or ``none``."""
    episode_memory_size: int = Field(3, ge=1)
    """Episode mode: how many earlier episodes an episode may remember."""
    episode_order: Literal["dataset", "seeded"] = "dataset"
    """Episode mode: the sequence's order: the data's own, or shuffled by ``seed``."""
    exporters: list[str] = Field(default_factory=list)
    """Exporters to run at session end besides those turned on by their own keys: the names of
    exporters installed packages register (``pytest_jeval.exporters``; ``jeval list`` shows them)."""
    wandb_project: str = ""
    """Weights & Biases project: when set, the controller logs one W&B run per (benchmark, model) at
    session end (needs ``pytest-jeval[wandb]``; docs/exports.md)."""
    wandb_entity: str = ""
    """W&B entity (user or team); default: W&B's own."""
    wandb_tags: str | list[str] = ""
    """W&B run tags: a list, or one string of comma-separated tags."""
    wandb_group: str = ""
    """W&B run group; default: none (W&B's own)."""
    sheets_spreadsheet_id: str = ""
    """Google Sheets spreadsheet id: when set, the controller appends one row per (benchmark, model)
    at session end (needs ``pytest-jeval[sheets]``; docs/exports.md)."""
    sheets_worksheet: str = "Results"
    """The worksheet (tab) rows go to; made when missing."""
    sheets_credentials_path: str = ""
    """A service-account JSON key file, relative to the suite file; default: gspread's
    ``~/.config/gspread/service_account.json``."""

    @field_validator("episode_memory")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        from pytest_jeval.agents.memory import MEMORY_POLICIES

        if value not in MEMORY_POLICIES:
            raise ValueError(f"unknown memory policy {value!r}; the policies are: {', '.join(MEMORY_POLICIES)}")
        return value

    @field_validator("output_file")
    @classmethod
    def _jsonl_file(cls, value: str | None) -> str | None:
        if value is not None and (not value.endswith(".jsonl") or Path(value).name == ".jsonl"):
            raise ValueError(f"output_file must name a .jsonl file, got {value!r} (a folder is output_dir)")
        return value

    @model_validator(mode="after")
    def _one_output_folder(self) -> Run:
        if self.output_file is not None and "output_dir" in self.model_fields_set:
            if os.path.normpath(self.output_dir) != os.path.normpath(Path(self.output_file).parent):
                raise ValueError(f"output_file {self.output_file!r} lies outside output_dir {self.output_dir!r}; "
                                 "set one of them (the file's folder is the output directory)")
        return self

    @property
    def concurrency(self) -> int:
        """Effective default concurrency per endpoint."""
        return self.max_concurrency or self.max_workers or 32

    @property
    def episodes_in_flight(self) -> int:
        """Effective bound on open agent episodes per process."""
        return self.max_episodes_in_flight or max(64, 2 * self.concurrency)


class BackendExternal(_Strict):
    """``[backend.external]``: endpoint fallback for models and the judge."""

    base_url: str | None = None
    api_key: SecretStr | None = None

    @field_validator("base_url")
    @classmethod
    def _no_credentials(cls, value: str | None) -> str | None:
        return _url_without_credentials(value)


class Backend(_Strict):
    """``[backend]`` table; only ``external`` is defined."""

    external: BackendExternal = Field(default_factory=BackendExternal)


class Suite(_Strict):
    """A whole suite file."""

    meta: Meta = Field(default_factory=Meta)
    defaults: Defaults = Field(default_factory=Defaults)
    judge: Judge | None = None
    user: UserModel | None = None
    run: Run = Field(default_factory=Run)
    backend: Backend = Field(default_factory=Backend)
    models: list[ModelEntry] = Field(min_length=1)
    benchmarks: list[BenchmarkEntry] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_names(self) -> Suite:
        for table, entries, keys in (
            ("models", self.models, [m.slug for m in self.models]),
            ("benchmarks", self.benchmarks, [b.key for b in self.benchmarks]),
        ):
            seen: dict[str, int] = {}
            for i, key in enumerate(keys):
                if key in seen:
                    raise ValueError(_duplicate(table, seen[key], entries[seen[key]], i, entries[i], key))
                seen[key] = i
        problems = colliding_pairs([b.key for b in self.benchmarks], [m.key for m in self.models])
        if problems:
            raise ValueError("results files would collide: " + "; ".join(problems) + "; rename one of each")
        return self


def _duplicate(table: str, j: int, first: ModelEntry | BenchmarkEntry, i: int, second: ModelEntry | BenchmarkEntry,
               key: str) -> str:
    """The message for two entries of ``table`` with the same key (their label, else their name)."""
    def what(e: ModelEntry | BenchmarkEntry) -> str:
        return f"label {e.label!r}" if e.label is not None else f"name {e.name!r}"

    if what(first) == what(second):
        same = f"duplicate {what(first)}"
    elif first.key == second.key:
        same = f"{what(first)} and {what(second)} are the same key"
    else:
        same = f"{first.key!r} and {second.key!r} both give {key!r}"
    return (f"{table}[{j}] and {table}[{i}]: {same} (used in test ids and file names); "
            f'give each a distinct label = "..."')


def _url_without_credentials(value: str | None) -> str | None:
    from pytest_jeval.core.redact import URL_CREDENTIALS_REFUSED, url_has_credentials

    if value is not None and url_has_credentials(value):
        raise ValueError(URL_CREDENTIALS_REFUSED)
    return value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _env_name(value: str | None) -> str | None:
    """``api_key_env`` must name a variable; a value that is not a name (a key pasted there) is refused unshown."""
    from pytest_jeval.core.redact import contains_secret

    if value is None:
        return None
    if contains_secret(value):
        raise ValueError("must be the NAME of an environment variable, and the value given looks like a key itself "
                         "(it is not shown); put the key in a variable and give the variable's name")
    if not _ENV_NAME.fullmatch(value):
        raise ValueError("must be the name of an environment variable (letters, digits and _, not starting with a "
                         "digit); the value given is not one (it is not shown)")
    return value


def _shown_input(value: Any) -> str:
    """An input as an error message may quote it: never a key, never a URL's credentials."""
    from pytest_jeval.core.redact import contains_secret, url_has_credentials

    text = repr(value)
    if isinstance(value, str) and (contains_secret(value) or url_has_credentials(value)):
        return "a value that looks like a key (not shown)"
    return text


def _loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _format_validation_error(path: Path, err: ValidationError) -> str:
    lines = [f"invalid suite {path}:"]
    for e in err.errors():
        loc = _loc(tuple(p for p in e["loc"] if not (isinstance(p, str) and p.startswith("function-"))))
        kind = e["type"]
        if kind == "extra_forbidden":
            msg = "unknown key"
        elif kind == "missing":
            msg = "required key is missing"
        else:
            msg = e["msg"]
            if "input" in e and kind not in ("value_error",) and not isinstance(e["input"], (dict, list)):
                msg += f" (got {_shown_input(e['input'])})"
        lines.append(f"  {loc}: {msg}")
    return "\n".join(lines)


def parse_suite(text: str, path: Path, *, overrides: Sequence[str] = ()) -> Suite:
    """Parse and validate suite TOML text; raise SuiteError naming ``path`` and the key path.

    ``overrides`` (``KEY=VALUE``, as ``--jeval-set`` takes them) are applied before validation
    (:mod:`pytest_jeval.suite.overrides`); an error they cause names the one that set the key.
    """
    from pytest_jeval.suite.overrides import OverrideError, apply_overrides, parse_overrides

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise SuiteError(f"invalid suite {path}: malformed TOML: {exc}") from None
    try:
        applied = apply_overrides(data, parse_overrides(overrides))
    except OverrideError as exc:
        raise SuiteError(f"invalid suite {path}:\n  {exc}") from None
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        raise SuiteError(applied.annotate(_format_validation_error(path, exc))) from None


def load_suite(path: str | os.PathLike[str], *, overrides: Sequence[str] = ()) -> Suite:
    """Read, parse and validate a suite file (with ``overrides`` applied, see :func:`parse_suite`)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SuiteError(f"suite file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"cannot read suite file {p}: {exc}") from None
    return parse_suite(text, p, overrides=overrides)
