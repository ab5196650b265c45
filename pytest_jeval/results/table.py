"""The results table printed in pytest's terminal summary."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pytest_jeval.results.writer import ResultsWriter


def _fmt(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _tokens(summary: dict[str, Any]) -> str:
    p, c = summary.get("total_prompt_tokens"), summary.get("total_completion_tokens")
    if p is None and c is None:
        return "-"
    return f"{int(p or 0)}/{int(c or 0)}"


def results_table(summaries: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """Lines of a table with one row per (benchmark, model)."""
    header = ("benchmark", "model", "n", "accuracy", "95% CI", "errors", "unscored", "mean latency", "tokens in/out")
    rows: list[Sequence[str]] = []
    for (bench, model), s in sorted(summaries.items()):
        ci = s.get("accuracy_ci")
        rows.append(
            (
                bench,
                model,
                str(s["total_samples"]),
                _fmt(s.get("accuracy")),
                "-" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                str(s["errors"]),
                str(s["unscored"]),
                "-" if s.get("mean_latency_seconds") is None else f"{s['mean_latency_seconds']:.3f}s",
                _tokens(s),
            )
        )
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    right = {2, 3, 5, 6, 7, 8}

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [line(header), line(["-" * w for w in widths])]
    out.extend(line(r) for r in rows)
    return out


def write_terminal_summary(tr: Any, writer: ResultsWriter, stats: list[dict[str, Any]]) -> None:
    """Write the writer's notes, the results table, the gates, the call statistics and the energy to ``tr``."""
    for note in writer.notes:
        tr.write_line(f"jeval: {note}", yellow=True)
    if writer.summaries:
        tr.write_sep("=", "jeval results")
        for line in results_table(writer.summaries):
            tr.write_line(line)
        if writer.gates:
            tr.write_line("")
            tr.write_line("gates:")
            for g in writer.gates:
                tr.write_line(f"  {g.describe()}", green=g.passed, red=not g.passed)
        tr.write_line("")
        for line in agent_lines(writer.summaries):
            tr.write_line(line)
        for line in repeat_lines(writer.summaries):
            tr.write_line(line)
        for line, yellow in _call_lines(stats):
            tr.write_line(line, yellow=yellow)
        tr.write_line(f"results: {writer.plan.output_dir}{os.sep} ({len(writer.files)} JSONL files, summary.json)")
    if writer.telemetry is not None:
        notice = writer.telemetry.notice()
        if notice:
            tr.write_line(f"jeval: {notice}", yellow=True)
        block = writer.telemetry.summary()
        if block["total_energy_joules"] is not None:
            tr.write_line(
                f"energy: {block['total_energy_joules']:.1f} J measured, {block['attributed_energy_joules']:.1f} J "
                f"attributed to calls, {block['idle_energy_joules']:.1f} J idle"
            )


def agent_lines(summaries: dict[tuple[str, str], dict[str, Any]]) -> list[str]:
    """One line per agent pair: episodes, mean turns, tool calls per episode, tool errors, stop reasons."""
    out = []
    for (bench, model), summary in summaries.items():
        agent = summary.get("agent")
        if not isinstance(agent, dict):
            continue
        reasons = ", ".join(f"{k} {v}" for k, v in (agent.get("stop_reasons") or {}).items())
        rate = agent.get("tool_error_rate")
        errors = f", tool errors {rate:.1%}" if isinstance(rate, float) else ""
        passes = agent.get("pass_hat_k")
        hat = (", " + " ".join(f"pass^{k} {v:.3f}" for k, v in passes.items())) if passes else ""
        out.append(f"agent: {bench} x {model}: {agent.get('episodes')} episodes, {agent.get('mean_turns', 0):.2f} "
                   f"turns and {agent.get('tool_calls_per_episode', 0):.2f} tool calls each{errors}; "
                   f"stopped: {reasons}{hat}")
    return out


def repeat_lines(summaries: dict[tuple[str, str], dict[str, Any]], max_listed: int = 10) -> list[str]:
    """Per pair run with repeats: pass@k, pass^k, mean and standard error, majority vote, the flip rate and the
    items whose verdict flipped; per pair with judge repeats, the judge's self-consistency."""
    out = []
    for (bench, model), summary in sorted(summaries.items()):
        rep = summary.get("repeats")
        if isinstance(rep, dict):
            k = str(rep.get("k"))
            se = rep.get("stderr")
            mean = "-" if rep.get("mean_accuracy") is None else f"{rep['mean_accuracy']:.3f}"
            mean += f" ± {se:.3f}" if se is not None else ""
            flipped = [str(f.get("item")) for f in rep.get("flipped") or []]
            listed = ", ".join(flipped[:max_listed]) + (f", ... {len(flipped) - max_listed} more"
                                                        if len(flipped) > max_listed else "")
            out.append(
                f"repeats: {bench} x {model}: {rep.get('items')} items x {k} runs; mean accuracy {mean} (SE over "
                f"repeats), pass@1 {_fmt((rep.get('pass_at_k') or {}).get('1'))}, pass@{k} "
                f"{_fmt((rep.get('pass_at_k') or {}).get(k))}, pass^{k} {_fmt((rep.get('pass_hat_k') or {}).get(k))}, "
                f"majority vote {_fmt(rep.get('majority_vote_accuracy'))}, flip rate {_fmt(rep.get('flip_rate'))}"
                + (f" ({rep.get('flipped_count')} flipped: {listed})" if flipped else ""))
        judged = summary.get("judged_by")
        judged = judged if isinstance(judged, dict) else {}
        for validation in judged.get("validations") or []:
            out.append(f"judge: {bench} x {model}: {judged.get('validated')} of {judged.get('verdicts')} verdicts by "
                       f"{validation.get('judge_model')}, validated on {validation.get('source')} "
                       f"({validation.get('evaluator')}, {validation.get('n')} items): accuracy "
                       f"{_fmt(validation.get('accuracy'))}, kappa {_fmt(validation.get('cohen_kappa'))}, ECE "
                       f"{_fmt(validation.get('ece'))}")
        judge = summary.get("judge_repeats")
        if isinstance(judge, dict):
            out.append(f"judge repeats: {bench} x {model}: {judge.get('items')} verdicts asked "
                       f"{judge.get('judge_repeats')} times; agreement {_fmt(judge.get('agreement'))}, unanimous "
                       f"{_fmt(judge.get('unanimous'))}")
    return out


def _call_lines(stats: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """The call statistics of every process that made calls: (line, is a warning)."""
    sent = sum(s["requests_sent"] for s in stats)
    hits = sum(s["cache_hits"] for s in stats)
    retries = sum(s["retries"] for s in stats)
    peak = max(s["max_in_flight"] for s in stats)
    spans = [
        s["last_completion_at"] - s["first_request_at"]
        for s in stats
        if s["first_request_at"] is not None and s["last_completion_at"] is not None
    ]
    rate = f", {sent / max(spans):.1f} requests/s in-call" if spans and max(spans) > 0 and sent else ""
    helpers = sum(s.get("call_processes", 0) for s in stats)
    where = f", HTTP client in {helpers} call process{'es' if helpers > 1 else ''}" if helpers else ""
    refused = sum(s.get("budget_refused", 0) for s in stats)
    held = f", {refused} refused by the run budget (never sent)" if refused else ""
    out = [(f"calls: {sent} sent, {hits} from cache, {retries} retries, peak {peak} in flight{rate}{where}{held}",
            False)]
    exits = sum(s.get("call_process_exits", 0) for s in stats)
    if exits:
        out.append(
            (
                f"jeval: the call process exited {exits} time(s) mid-run; its unanswered calls were "
                "sent again, and later calls ran, in the pytest process",
                True,
            )
        )
        out.extend((f"  {e}", True) for s in stats for e in s.get("call_process_errors", ()))
    return out
