"""Small inline-SVG charts for the HTML report, written directly (no plotting library).

Each function returns one ``<svg>`` element as a string, sized by its ``viewBox``
so that it scales with the page. Text is escaped here. The elements carry
classes that the page's CSS styles and the browser test counts:

* ``svg.ci`` ``line.ci-range`` - a confidence interval on [0, 1] (summary table);
* ``svg.bars`` ``rect.bar`` (one per bar) ``line.whisker`` - grouped horizontal bars;
* ``svg.histogram`` ``rect.hist-bar`` (one per bin, empty bins too);
* ``svg.reliability`` ``g.bin`` (one per bin) with ``rect.observed`` and ``text.bin-count``;
* ``svg.heatmap`` ``rect.cell`` (one per matrix cell) with its count as text.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from html import escape
from typing import Any

import numpy as np

PALETTE = ("#4c72b0", "#dd8452", "#55a868", "#c44e52", "#8172b3", "#937860", "#da8bc3", "#8c8c8c", "#ccb974",
           "#64b5cd")

LABEL_W = 190  # left margin for category labels
PLOT_W = 440


def color(index: int) -> str:
    """The colour of the ``index``-th run."""
    return PALETTE[index % len(PALETTE)]


def _e(value: Any) -> str:
    return escape(str(value), quote=True)


def num(x: float) -> str:
    """A coordinate or value, compactly."""
    text = f"{x:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def tick_label(x: float) -> str:
    """A tick value: integers plainly, else up to three significant digits."""
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values covering [lo, hi] (steps of 1, 2, 2.5 or 5 x 10^k)."""
    if not hi > lo:
        return [lo]
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks


def _svg(css: str, width: float, height: float, body: list[str], label: str) -> str:
    return (f'<svg class="{css}" viewBox="0 0 {num(width)} {num(height)}" width="{num(width)}" '
            f'height="{num(height)}" role="img" aria-label="{_e(label)}">' + "".join(body) + "</svg>")


def _x_axis(x0: float, y: float, width: float, lo: float, hi: float, title: str) -> list[str]:
    """A horizontal axis with ticks and grid lines going up to y=0."""
    out = [f'<line class="axis" x1="{num(x0)}" y1="{num(y)}" x2="{num(x0 + width)}" y2="{num(y)}"/>']
    for t in nice_ticks(lo, hi):
        x = x0 + (t - lo) / (hi - lo) * width if hi > lo else x0
        out.append(f'<line class="grid" x1="{num(x)}" y1="0" x2="{num(x)}" y2="{num(y)}"/>')
        out.append(f'<text class="tick" x="{num(x)}" y="{num(y + 14)}" text-anchor="middle">{tick_label(t)}</text>')
    out.append(f'<text class="axis-title" x="{num(x0 + width / 2)}" y="{num(y + 30)}" '
               f'text-anchor="middle">{_e(title)}</text>')
    return out


def ci_strip(value: float | None, low: float | None, high: float | None, *, width: float = 140,
             height: float = 16, fill: str = PALETTE[0]) -> str:
    """A confidence interval drawn on a [0, 1] strip with the estimate as a dot."""
    body = [f'<line class="axis" x1="0" y1="{num(height / 2)}" x2="{num(width)}" y2="{num(height / 2)}"/>']
    if value is not None and low is not None and high is not None:
        def x(v: float) -> float:
            return 4 + v * (width - 8)

        body.append(f'<line class="ci-range" x1="{num(x(low))}" y1="{num(height / 2)}" x2="{num(x(high))}" '
                    f'y2="{num(height / 2)}" stroke="{fill}"/>')
        body.append(f'<circle cx="{num(x(value))}" cy="{num(height / 2)}" r="3.5" fill="{fill}"/>')
    return _svg("ci", width, height, body, "95% confidence interval")


@dataclasses.dataclass(frozen=True)
class Bar:
    """One bar of a grouped bar chart."""

    series: str
    value: float | None
    low: float | None = None
    high: float | None = None
    fill: str = PALETTE[0]
    note: str = ""


def grouped_bars(groups: Sequence[tuple[str, Sequence[Bar]]], *, x_max: float = 1.0, x_title: str = "accuracy",
                 css: str = "bars") -> str:
    """Horizontal bars, one group per category (e.g. subject), one bar per series (run),
    with interval whiskers where ``low``/``high`` are given."""
    bar_h, gap, group_gap, top = 12, 3, 10, 6
    axis_y = top + sum(len(bars) * (bar_h + gap) - gap + group_gap for _, bars in groups) - group_gap + 2
    body = _x_axis(LABEL_W, axis_y, PLOT_W, 0.0, x_max, x_title)  # first, so that bars cover the grid
    y = top
    for name, bars in groups:
        group_h = len(bars) * (bar_h + gap) - gap
        body.append(f'<text class="category" x="{LABEL_W - 8}" y="{num(y + group_h / 2 + 4)}" '
                    f'text-anchor="end">{_e(_clip(name, 28))}<title>{_e(name)}</title></text>')
        for bar in bars:
            width = 0.0 if bar.value is None else max(0.0, min(bar.value, x_max)) / x_max * PLOT_W
            tip = f"{bar.series}: {'-' if bar.value is None else f'{bar.value:.3f}'}"
            if bar.low is not None and bar.high is not None:
                tip += f" [{bar.low:.3f}, {bar.high:.3f}]"
            if bar.note:
                tip += f" ({bar.note})"
            body.append(f'<rect class="bar" x="{LABEL_W}" y="{num(y)}" width="{num(width)}" height="{bar_h}" '
                        f'fill="{bar.fill}" data-group="{_e(name)}" data-series="{_e(bar.series)}">'
                        f"<title>{_e(tip)}</title></rect>")
            if bar.low is not None and bar.high is not None:
                x1, x2 = (LABEL_W + min(v, x_max) / x_max * PLOT_W for v in (bar.low, bar.high))
                yc = y + bar_h / 2
                body.append(f'<line class="whisker" x1="{num(x1)}" y1="{num(yc)}" x2="{num(x2)}" y2="{num(yc)}"/>')
            y += bar_h + gap
        y += group_gap - gap
    return _svg(css, LABEL_W + PLOT_W + 20, axis_y + 36, body, x_title)


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def histogram(values: Sequence[float], *, lo: float, hi: float, n_bins: int, x_title: str,
              fill: str = PALETTE[0]) -> str:
    """A histogram of ``values`` over [lo, hi] in ``n_bins`` equal bins (numpy's edges)."""
    width, height, left, top, bottom = 300.0, 130.0, 34.0, 8.0, 36.0
    if not hi > lo:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=n_bins, range=(lo, hi))
    peak = max(int(counts.max()), 1)
    body: list[str] = []
    for t in nice_ticks(0, peak, 3):
        y = top + height - t / peak * height
        body.append(f'<line class="grid" x1="{num(left)}" y1="{num(y)}" x2="{num(left + width)}" y2="{num(y)}"/>')
        body.append(f'<text class="tick" x="{num(left - 4)}" y="{num(y + 4)}" text-anchor="end">{tick_label(t)}</text>')
    bin_w = width / n_bins
    for i, count in enumerate(counts.tolist()):
        h = count / peak * height
        body.append(f'<rect class="hist-bar" x="{num(left + i * bin_w + 0.5)}" y="{num(top + height - h)}" '
                    f'width="{num(max(bin_w - 1, 0.5))}" height="{num(h)}" fill="{fill}" data-count="{count}">'
                    f"<title>{_e(f'[{edges[i]:.4g}, {edges[i + 1]:.4g}]: {count}')}</title></rect>")
    axis = _x_axis(left, top + height, width, lo, hi, x_title)
    body += [a for a in axis if 'class="grid"' not in a]
    return _svg("histogram", left + width + 12, top + height + bottom, body, x_title)


def reliability_diagram(bins: Sequence[dict[str, Any]], *, title: str = "stated probability") -> str:
    """Observed rate per probability bin against the diagonal, with each bin's count above it."""
    size, left, top, bottom = 260.0, 40.0, 16.0, 36.0
    body: list[str] = []
    for t in nice_ticks(0, 1, 5):
        y = top + size - t * size
        body.append(f'<line class="grid" x1="{num(left)}" y1="{num(y)}" x2="{num(left + size)}" y2="{num(y)}"/>')
        body.append(f'<text class="tick" x="{num(left - 4)}" y="{num(y + 4)}" text-anchor="end">{tick_label(t)}</text>')
    for b in bins:
        x0 = left + float(b["lower"]) * size
        w = (float(b["upper"]) - float(b["lower"])) * size
        count = int(b["count"])
        rate = b.get("observed_rate")
        conf = b.get("mean_confidence")
        parts = [f'<g class="bin" data-count="{count}">']
        if count and rate is not None:
            h = float(rate) * size
            parts.append(f'<rect class="observed" x="{num(x0 + 1)}" y="{num(top + size - h)}" width="{num(w - 2)}" '
                         f'height="{num(h)}"/>')
        if count and conf is not None:
            parts.append(f'<circle class="confidence" cx="{num(x0 + w / 2)}" '
                         f'cy="{num(top + size - float(conf) * size)}" '
                         f'r="3"/>')
        label_y = top + size - (float(rate) * size if count and rate is not None else 0) - 3
        parts.append(f'<text class="bin-count" x="{num(x0 + w / 2)}" y="{num(max(label_y, top - 3))}" '
                     f'text-anchor="middle">{count}</text>')
        tip = f"({float(b['lower']):.2f}, {float(b['upper']):.2f}]: n={count}"
        if count and rate is not None and conf is not None:
            tip += f", observed {float(rate):.3f}, mean probability {float(conf):.3f}"
        parts.append(f"<title>{_e(tip)}</title></g>")
        body.append("".join(parts))
    body.append(f'<line class="diagonal" x1="{num(left)}" y1="{num(top + size)}" x2="{num(left + size)}" '
                f'y2="{num(top)}"/>')
    axis = _x_axis(left, top + size, size, 0.0, 1.0, title)
    body += [a for a in axis if 'class="grid"' not in a]
    body.append(f'<text class="axis-title" x="12" y="{num(top + size / 2)}" text-anchor="middle" '
                f'transform="rotate(-90 12 {num(top + size / 2)})">observed rate</text>')
    return _svg("reliability", left + size + 16, top + size + bottom, body, "reliability diagram")


def _heat(fraction: float) -> str:
    """White to dark blue."""
    lo, hi = (247, 251, 255), (8, 48, 107)
    rgb = (round(a + (b - a) * fraction) for a, b in zip(lo, hi))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def heatmap(matrix: Sequence[Sequence[int]], labels: Sequence[Any], *, row_title: str = "gold",
            col_title: str = "predicted") -> str:
    """A count matrix (rows ``row_title``, columns ``col_title``) as shaded cells with their counts."""
    k = len(labels)
    cell = max(28.0, min(56.0, 300.0 / max(k, 1)))
    left, top = 110.0, 50.0
    peak = max((max(row) for row in matrix), default=0) or 1
    body = [f'<text class="axis-title" x="{num(left + k * cell / 2)}" y="14" text-anchor="middle">'
            f"{_e(col_title)}</text>"]
    for j, label in enumerate(labels):
        body.append(f'<text class="tick" x="{num(left + j * cell + cell / 2)}" y="{num(top - 8)}" '
                    f'text-anchor="middle">{_e(_clip(str(label), 8))}</text>')
    for i, label in enumerate(labels):
        y = top + i * cell
        body.append(f'<text class="tick" x="{num(left - 6)}" y="{num(y + cell / 2 + 4)}" text-anchor="end">'
                    f"{_e(_clip(str(label), 14))}</text>")
        for j in range(k):
            count = int(matrix[i][j])
            fraction = count / peak
            body.append(f'<rect class="cell" x="{num(left + j * cell)}" y="{num(y)}" width="{num(cell)}" '
                        f'height="{num(cell)}" fill="{_heat(fraction)}" data-count="{count}">'
                        f"<title>{_e(f'{row_title} {labels[i]}, {col_title} {labels[j]}: {count}')}</title></rect>")
            body.append(f'<text class="cell-count{" dark" if fraction > 0.5 else ""}" '
                        f'x="{num(left + j * cell + cell / 2)}" y="{num(y + cell / 2 + 4)}" '
                        f'text-anchor="middle">{count}</text>')
    body.append(f'<text class="axis-title" x="14" y="{num(top + k * cell / 2)}" text-anchor="middle" '
                f'transform="rotate(-90 14 {num(top + k * cell / 2)})">{_e(row_title)}</text>')
    return _svg("heatmap", left + k * cell + 10, top + k * cell + 10, body, "confusion matrix")
