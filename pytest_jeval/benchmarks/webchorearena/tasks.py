"""webchorearena's task configs: reading them, the settings a suite gives, and the episode's sites.

Configs are WebChoreArena's JSON files (a list of task objects, ``test_*.raw.json``): ``task_id``,
``sites``, ``start_url`` (with ``__SITE__`` placeholders), ``intent``, ``storage_state`` and ``eval``.
The bundled file ``data/local.raw.json`` holds tasks written for the local shop and forum in that format,
each with its gold browser steps under ``jeval_oracle`` (an extra key upstream does not have).

Sites: ``shopping`` and ``shopping_admin`` are the local shop (the admin at ``/admin``) and ``reddit`` the
local forum, started fresh for every episode, unless ``[benchmarks.options] sites`` gives a URL for the
site; ``gitlab``, ``wikipedia`` and ``map`` only exist as the user's own WebArena sites.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from pytest_jeval.benchmarks._web.tasks import check_steps, require_browser
from pytest_jeval.benchmarks.webchorearena.evaluators import check_config
from pytest_jeval.core.benchmark import LoadContext
from pytest_jeval.core.sample import Sample
from pytest_jeval.suite.dataset import DatasetLoadError
from pytest_jeval.suite.options import SuitePath

LOCAL_SITES = {"shopping": ("shop", ""), "shopping_admin": ("shop", "/admin"), "reddit": ("forum", "")}
"""Site → (local application, path of the site in it)."""
KNOWN_SITES = ("shopping", "shopping_admin", "reddit", "gitlab", "wikipedia", "map", "homepage")


class Options(BaseModel):
    """``[benchmarks.options]`` of webchorearena."""

    model_config = ConfigDict(extra="forbid")

    sites: dict[str, str] = Field(default_factory=dict)
    """Your WebArena sites' URLs by site name (shopping, shopping_admin, reddit, gitlab, wikipedia, map,
    homepage), e.g. ``{ shopping = "http://10.0.0.5:7770" }``; a site given here is used instead of the local one
    and is not reset by pytest-jeval (reset it as WebArena's docs say)."""
    auth_dir: SuitePath | None = None
    """A directory of Playwright storage states (WebArena's ``.auth/<site>_state.json``): a task's
    ``storage_state`` file is looked up there by its name."""
    action_timeout: float = Field(10.0, gt=0)
    """Seconds a browser action waits for its element."""
    navigation_timeout: float = Field(15.0, gt=0)
    """Seconds a browser action waits for the page to load."""


def read_rows(files: Sequence[Path], ctx: LoadContext) -> Iterable[dict[str, Any]]:
    """Every task config of the JSON files (each a list of configs, or one config)."""
    require_browser(ctx.benchmark)
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    unknown = sorted(set(options.sites) - set(KNOWN_SITES))
    if unknown:
        raise DatasetLoadError(f"[benchmarks.options] sites: unknown site(s) {', '.join(unknown)}; the sites are "
                               f"{', '.join(KNOWN_SITES)}")
    for path in files:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise DatasetLoadError(f"{path}: not a WebChoreArena config file ({exc})") from None
        for config in data if isinstance(data, list) else [data]:
            if not isinstance(config, dict):
                raise DatasetLoadError(f"{path}: every task config must be a JSON object")
            yield {"config": config, "file": str(path)}


def to_sample(row: dict[str, Any], index: int, ctx: LoadContext) -> Sample:
    """One task config; a site it needs that is neither local nor given is a usage error."""
    config = row["config"]
    where = f"{row['file']} task {config.get('task_id', index)}"
    try:
        check_config(config, where)
        if "jeval_oracle" in config:
            check_steps(config["jeval_oracle"], where)
    except ValueError as exc:
        raise DatasetLoadError(str(exc)) from None
    options = ctx.options if isinstance(ctx.options, Options) else Options()
    sites = list(config.get("sites") or [])
    missing = [s for s in sites if s not in options.sites and s not in LOCAL_SITES]
    if missing:
        raise DatasetLoadError(f"{where} needs the WebArena site(s) {', '.join(missing)}, which do not run here: "
                               f"give their URLs in [benchmarks.options] sites (docs/web.md)")
    storage = None
    if config.get("storage_state") and options.auth_dir is not None:
        found = Path(options.auth_dir) / Path(str(config["storage_state"])).name
        storage = str(found) if found.is_file() else None
    return Sample(
        id=f"task-{config['task_id']}",
        input=str(config["intent"]),
        target=config["eval"],
        subject=str(config.get("type_main") or "") or None,
        metadata={"config": config, "sites": sites, "user_sites": {s: u for s, u in options.sites.items()},
                  "storage_state": storage, "action_timeout": options.action_timeout,
                  "navigation_timeout": options.navigation_timeout},
    )
