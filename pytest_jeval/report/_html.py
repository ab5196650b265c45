"""The report page: one self-contained HTML file (inline CSS, inline SVG, a few lines of inline JS).

A Content-Security-Policy ``default-src 'none'`` keeps the page from loading anything
from anywhere; it reads the same offline, from a mail attachment or a CI artifact.
"""

from __future__ import annotations

import datetime
import math
import statistics
from collections.abc import Sequence
from html import escape
from typing import Any

from pytest_jeval import __version__
from pytest_jeval.report import _svg, _trajectory
from pytest_jeval.results.reader import ResultFile, judge_view, present, record_status, run_labels
from pytest_jeval.scoring.metrics import wilson_interval

#: Distributions drawn where any run measured them: (record field, axis title).
DISTRIBUTIONS = (
    ("latency_seconds", "latency (s)"),
    ("ttft", "time to first token (s)"),
    ("prompt_tokens", "prompt tokens"),
    ("completion_tokens", "completion tokens"),
    ("energy_joules", "energy (J)"),
)
#: Most subjects drawn per benchmark (those with the most samples).
MAX_SUBJECTS = 40
#: Order of the worst-samples table.
STATUS_RANK = {"wrong": 0, "unscored": 1, "error": 2, "correct": 3}
#: Characters of question / answer text kept per cell.
MAX_TEXT = 4000

CSS = """
:root { --fg:#1f2328; --muted:#656d76; --line:#d0d7de; --bg:#ffffff; --soft:#f6f8fa; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; padding: 24px; max-width: 1280px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; } .muted { color: var(--muted); }
table { border-collapse: collapse; width: 100%; } th, td { padding: 4px 8px; border-bottom: 1px solid var(--line);
  text-align: left; vertical-align: top; } th { background: var(--soft); position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; }
.legend span { margin-right: 16px; white-space: nowrap; }
.row { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
figure { margin: 0; } figcaption { font-size: 12px; color: var(--muted); }
svg { max-width: 100%; height: auto; font: 11px system-ui, sans-serif; }
svg .axis { stroke: #57606a; } svg .grid { stroke: #eaeef2; } svg .tick { fill: #57606a; }
svg .axis-title { fill: #57606a; } svg .category { fill: var(--fg); }
svg .whisker { stroke: #24292f; stroke-width: 1.2; } svg .ci-range { stroke-width: 3; }
svg .diagonal { stroke: #8c959f; stroke-dasharray: 4 3; } svg .observed { fill: #4c72b0; opacity: .8; }
svg .confidence { fill: #dd8452; } svg .bin-count { fill: #24292f; font-size: 10px; }
svg .cell { stroke: #fff; } svg .cell-count { fill: #24292f; } svg .cell-count.dark { fill: #fff; }
.controls { display: flex; gap: 12px; align-items: center; margin: 8px 0; }
input[type=search] { font: inherit; padding: 4px 8px; width: 360px; max-width: 100%; }
.status { font-weight: 600; } .status-wrong { color: #c44e52; } .status-unscored { color: #9a6700; }
.status-error { color: #8250df; } .status-correct { color: #1a7f37; }
.text { max-height: 9em; overflow: auto; white-space: pre-wrap; word-break: break-word; font-size: 13px; }
.gate-pass { color: #1a7f37; } .gate-fail { color: #c44e52; }
"""

SEARCH_JS = """
(function () {
  var box = document.getElementById('sample-search');
  var status = document.getElementById('status-filter');
  var shown = document.getElementById('samples-shown');
  var rows = Array.prototype.slice.call(document.querySelectorAll('#samples tbody tr[data-status]'));
  function trajectoryRow(tr) {
    var next = tr.nextElementSibling;
    return next && next.classList.contains('trajectory-row') ? next : null;
  }
  function apply() {
    var words = box.value.toLowerCase().split(/\\s+/).filter(Boolean);
    var wanted = status.value;
    var n = 0;
    rows.forEach(function (tr) {
      var extra = trajectoryRow(tr);
      var text = tr.textContent.toLowerCase();
      if (extra) { text += ' ' + extra.querySelector('summary').textContent.toLowerCase(); }
      var hit = (!wanted || tr.getAttribute('data-status') === wanted) &&
        words.every(function (w) { return text.indexOf(w) !== -1; });
      tr.hidden = !hit;
      if (extra) { extra.hidden = !hit; }
      if (hit) { n += 1; }
    });
    shown.textContent = String(n);
  }
  box.addEventListener('input', apply);
  status.addEventListener('change', apply);
  apply();
})();
"""


def _e(value: Any) -> str:
    return escape("" if value is None else str(value), quote=True)


def _f(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _text(value: Any) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + " …"


class Page:
    """The report of a list of runs."""

    def __init__(self, files: Sequence[ResultFile], *, title: str | None = None,
                 aggregate: dict[str, Any] | None = None, worst: int = 200) -> None:
        self.files = list(files)
        self.labels = run_labels(self.files)
        self.colors = [_svg.color(i) for i in range(len(self.files))]
        self.title = title or (f"jeval report: {aggregate['suite']}" if aggregate and aggregate.get("suite")
                               else "jeval report")
        self.aggregate = aggregate
        self.worst = worst

    def render(self) -> str:
        """The whole HTML document."""
        now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        sections = [self.summary_section(), self.repeats_section(), self.subject_section(), self.judge_section(),
                    self.distribution_section(), self.samples_section()]
        return "\n".join([
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">",
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_e(self.title)}</title><style>{CSS}{_trajectory.CSS}</style></head><body>",
            f"<h1>{_e(self.title)}</h1>",
            f'<p class="muted">{len(self.files)} run(s); generated {now} by pytest-jeval {_e(__version__)} '
            "from the JSONL records (summaries recomputed).</p>",
            *[s for s in sections if s],
            f"<script>{SEARCH_JS}</script>",
            "</body></html>",
        ])

    def _swatch(self, i: int) -> str:
        return f'<span class="swatch" style="background:{self.colors[i]}"></span>'

    def legend(self, indices: Sequence[int]) -> str:
        return '<p class="legend">' + "".join(
            f"<span>{self._swatch(i)}{_e(self.labels[i])}</span>" for i in indices) + "</p>"

    # -- summary ---------------------------------------------------------------------------
    def summary_section(self) -> str:
        head = ("run", "n", "accuracy", "95% CI", "", "errors", "unscored", "mean latency", "tokens in/out",
                "energy (J)", "cost (USD)")
        numeric = {1, 2, 3, 5, 6, 7, 8, 9, 10}
        rows = []
        for i, f in enumerate(self.files):
            s = f.summary
            ci = s.get("accuracy_ci") or (None, None)
            p, c = s.get("total_prompt_tokens"), s.get("total_completion_tokens")
            cells = [
                f"{self._swatch(i)}{_e(self.labels[i])}",
                str(s["total_samples"]), _f(s.get("accuracy")),
                "-" if ci[0] is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]",
                _svg.ci_strip(s.get("accuracy"), ci[0], ci[1], fill=self.colors[i]),
                str(s["errors"]), str(s["unscored"]),
                "-" if s.get("mean_latency_seconds") is None else f"{s['mean_latency_seconds']:.3f}s",
                "-" if p is None and c is None else f"{int(p or 0)}/{int(c or 0)}",
                _f(s.get("total_energy_joules"), ".1f"), _f(s.get("total_cost_usd"), ".4f"),
            ]
            rows.append("<tr>" + "".join(f'<td class="num">{c}</td>' if j in numeric else f"<td>{c}</td>"
                                         for j, c in enumerate(cells)) + "</tr>")
        header = "".join(f'<th class="num">{_e(h)}</th>' if j in numeric else f"<th>{_e(h)}</th>"
                         for j, h in enumerate(head))
        out = ['<section id="summary"><h2>Summary</h2>',
               f'<table id="summary-table"><thead><tr>{header}</tr></thead><tbody>{"".join(rows)}</tbody></table>',
               '<p class="muted">Accuracy is correct / samples that did not error; unscored answers count as '
               "wrong. The interval is Wilson's 95% score interval.</p>"]
        gates = (self.aggregate or {}).get("gates") or []
        if gates:
            out.append("<h3>Gates</h3><ul>")
            for g in gates:
                ok = bool(g.get("passed"))
                op = ">=" if g.get("gate") == "min_accuracy" else "<="
                out.append(f'<li class="{"gate-pass" if ok else "gate-fail"}">{"PASS" if ok else "FAIL"} '
                           f"{_e(g.get('benchmark'))} × {_e(g.get('model'))}: {_e(g.get('gate'))} {op} "
                           f"{_e(g.get('threshold'))} (measured {_f(g.get('measured'), '.4f')})</li>")
            out.append("</ul>")
        out.append("</section>")
        return "".join(out)

    # -- repeats, drift, budget ------------------------------------------------------------
    def repeats_section(self) -> str:
        """Per run with repeats: pass@k, pass^k, mean ± SE, majority vote, flip rate and the flipped items;
        and any warning the summary carries (several fingerprints, a stopped budget)."""
        out: list[str] = []
        for i, f in enumerate(self.files):
            s = f.summary
            rep = s.get("repeats")
            notes = []
            served = s.get("served")
            if isinstance(served, dict) and served.get("warning"):
                notes.append(str(served["warning"]))
            if s.get("budget_exhausted"):
                notes.append(f"{s['budget_exhausted']} item(s) were stopped by the run budget (errors).")
            if not isinstance(rep, dict) and not notes:
                continue
            out.append(f"<h3>{self._swatch(i)}{_e(self.labels[i])}</h3>")
            out.extend(f'<p class="warning">{_e(note)}</p>' for note in notes)
            if isinstance(rep, dict):
                se = rep.get("stderr")
                mean = _f(rep.get("mean_accuracy")) + (f" ± {se:.3f}" if isinstance(se, float) else "")
                passes = ", ".join(f"pass@{k} {_f(v)}" for k, v in (rep.get("pass_at_k") or {}).items())
                hats = ", ".join(f"pass^{k} {_f(v)}" for k, v in (rep.get("pass_hat_k") or {}).items())
                out.append(f"<p>{_e(rep.get('items'))} items × {_e(rep.get('k'))} runs: mean accuracy {mean} "
                           f"(standard error over repeats), majority vote {_f(rep.get('majority_vote_accuracy'))}, "
                           f"flip rate {_f(rep.get('flip_rate'))}.</p><p>{_e(passes)}</p><p>{_e(hats)}</p>")
                flipped = rep.get("flipped") or []
                if flipped:
                    marks = {True: "✓", False: "✗"}
                    items = "".join(f"<li><code>{_e(x.get('item'))}</code>: "
                                    f"{_e(' '.join(marks.get(v, '–') for v in x.get('verdicts') or []))}</li>"
                                    for x in flipped)
                    out.append(f'<details class="flipped"><summary>{_e(rep.get("flipped_count"))} items whose verdict '
                               f"flipped between runs</summary><ul>{items}</ul></details>")
        if not out:
            return ""
        return '<section id="repeats"><h2>Repeats, drift and budget</h2>' + "".join(out) + "</section>"

    # -- per subject -----------------------------------------------------------------------
    def subject_section(self) -> str:
        by_benchmark: dict[str, list[int]] = {}
        for i, f in enumerate(self.files):
            if f.summary.get("per_subject"):
                by_benchmark.setdefault(f.benchmark, []).append(i)
        if not by_benchmark:
            return ""
        out = ['<section id="per-subject"><h2>Per subject</h2>']
        for bench, indices in by_benchmark.items():
            totals: dict[str, float] = {}
            for i in indices:
                for name, sub in self.files[i].summary["per_subject"].items():
                    totals[name] = totals.get(name, 0) + sub["total"]
            names = sorted(totals, key=lambda n: (-totals[n], n))[:MAX_SUBJECTS]
            names.sort()
            groups = []
            for name in names:
                bars = []
                for i in indices:
                    sub = self.files[i].summary["per_subject"].get(name)
                    if sub is None:
                        continue
                    answered = int(sub["total"] - sub["errors"])
                    low, high = wilson_interval(int(sub["correct"]), answered) if answered else (None, None)
                    bars.append(_svg.Bar(series=self.labels[i], value=sub["accuracy"], low=low, high=high,
                                         fill=self.colors[i], note=f"n={int(sub['total'])}"))
                groups.append((name, bars))
            more = f" (the {MAX_SUBJECTS} largest of {len(totals)})" if len(totals) > MAX_SUBJECTS else ""
            out.append(f'<figure class="subject-chart" data-benchmark="{_e(bench)}"><h3>{_e(bench)}{more}</h3>')
            out.append(self.legend(indices))
            out.append(_svg.grouped_bars(groups, x_title="accuracy (bars) with 95% Wilson interval"))
            out.append("</figure>")
        out.append("</section>")
        return "".join(out)

    # -- judges ----------------------------------------------------------------------------
    def judge_section(self) -> str:
        views = [(i, v) for i, f in enumerate(self.files) if (v := judge_view(f)) is not None]
        if not views:
            return ""
        out = ['<section id="judges"><h2>Judges</h2>']
        for i, view in views:
            out.append(f'<h3>{self._swatch(i)}{_e(self.labels[i])} '
                       f'<span class="muted">({_e(view.case_kind)})</span></h3>'
                       '<div class="row">')
            if view.bins:
                filled = sum(1 for b in view.bins if b["count"])
                out.append(f'<figure class="judge-reliability">{_svg.reliability_diagram(view.bins)}'
                           f"<figcaption>Reliability: {len(view.bins)} bins ({filled} with items), count above "
                           f"each bar; ECE {_f(view.ece)}. Dots: mean stated probability.</figcaption></figure>")
            else:
                out.append('<p class="muted">No probabilities in these records: no reliability diagram.</p>')
            if view.matrix:
                out.append(f'<figure class="judge-confusion">{_svg.heatmap(view.matrix, view.labels)}'
                           "<figcaption>Confusion matrix: rows gold, columns predicted.</figcaption></figure>")
            out.append("</div>")
        out.append("</section>")
        return "".join(out)

    # -- distributions ---------------------------------------------------------------------
    def distribution_section(self) -> str:
        out = []
        for field, title in DISTRIBUTIONS:
            series = [(i, present(f.records, field)) for i, f in enumerate(self.files)]
            series = [(i, v) for i, v in series if v]
            if not series:
                continue
            lo = min(min(v) for _, v in series)
            hi = max(max(v) for _, v in series)
            n_bins = max(5, min(30, math.ceil(math.sqrt(max(len(v) for _, v in series)))))
            out.append(f'<h3>{_e(title)}</h3><div class="row distribution" data-field="{_e(field)}">')
            for i, values in series:
                mean, median = statistics.fmean(values), statistics.median(values)
                chart = _svg.histogram(values, lo=lo, hi=hi, n_bins=n_bins, x_title=title, fill=self.colors[i])
                out.append(f"<figure>{chart}<figcaption>{self._swatch(i)}{_e(self.labels[i])}: n={len(values)}, "
                           f"mean {mean:.4g}, median {median:.4g}</figcaption></figure>")
            out.append("</div>")
        if not out:
            return ""
        return '<section id="distributions"><h2>Distributions</h2>' + "".join(out) + "</section>"

    # -- worst samples ---------------------------------------------------------------------
    def worst_rows(self) -> list[tuple[int, dict[str, Any], str]]:
        """``(run index, record, status)``: wrong, unscored, errored, then correct; runs interleaved."""
        ranked = []
        for i, f in enumerate(self.files):
            seen: dict[str, int] = {}
            for r in f.records:
                status = record_status(r)
                position = seen.get(status, 0)
                seen[status] = position + 1
                ranked.append(((STATUS_RANK[status], position, i), (i, r, status)))
        ranked.sort(key=lambda item: item[0])
        return [row for _, row in ranked[: self.worst]]

    def samples_section(self) -> str:
        rows = self.worst_rows()
        total = sum(len(f.records) for f in self.files)
        body = []
        for n, (i, r, status) in enumerate(rows, 1):
            expected = r.get("expected") if r.get("expected") is not None else r.get("gold")
            extracted = r.get("extracted") if r.get("extracted") is not None else r.get("predicted")
            answer = r.get("model_answer") if r.get("error") is None else f"error: {r.get('error')}"
            body.append(
                f'<tr data-status="{status}"><td class="num">{n}</td><td>{self._swatch(i)}{_e(self.labels[i])}</td>'
                f"<td>{_e(r.get('record_id'))}</td><td>{_e(r.get('subject') or '')}</td>"
                f'<td class="status status-{status}">{status}</td>'
                f'<td><div class="text">{_e(_text(r.get("question")))}</div></td>'
                f'<td><div class="text">{_e(_text(expected))}</div></td>'
                f'<td><div class="text">{_e(_text(answer))}</div></td>'
                f'<td><div class="text">{_e(_text(extracted))}</div></td></tr>')
            trajectory = self.files[i].trajectories.get(str(r.get("record_id")))
            if trajectory is not None or isinstance(r.get("agent"), dict):
                body.append(f'<tr class="trajectory-row"><td></td><td colspan="8">'
                            f"{_trajectory.render(r, trajectory)}</td></tr>")
        options = "".join(f'<option value="{s}">{s}</option>' for s in STATUS_RANK)
        return (
            '<section id="worst"><h2>Worst samples</h2>'
            f'<p class="muted">{len(rows)} of {total} records: wrong, unscored and errored first.</p>'
            '<div class="controls"><input type="search" id="sample-search" placeholder="filter rows: words in any '
            'column" aria-label="filter samples">'
            f'<select id="status-filter" aria-label="status"><option value="">any status</option>{options}</select>'
            f'<span><span id="samples-shown">{len(rows)}</span> shown</span></div>'
            '<table id="samples"><thead><tr><th class="num">#</th><th>run</th><th>record</th><th>subject</th>'
            "<th>status</th><th>question</th><th>expected</th><th>answer</th><th>extracted</th></tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></section>"
        )
