"""The Panel's charts as geometry for an inline SVG (``approvals/panel/_chart.html``):
bars per day or per tool, stacked by series, each bar a link to the list it
counts. Drawn on the server from the figures, nothing fetched by the browser."""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal

WIDTH = 640
HEIGHT = 220
#: Room for the scale on the left and the dates underneath.
LEFT = 44
BOTTOM = 24
TOP = 8


@dataclass(frozen=True)
class Series:
    """One quantity drawn in a chart: its name, its colour's CSS class, and a
    value (with the link to its list, if any) for each column."""

    name: str
    css: str
    values: Sequence[float | int | Decimal]
    links: Sequence[str | None] = ()


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    css: str
    title: str
    link: str | None


@dataclass(frozen=True)
class Label:
    x: float
    y: float
    text: str
    anchor: str = "middle"
    #: ``minor``: a label a narrow screen leaves out (its words are drawn larger).
    css: str = ""


@dataclass
class Chart:
    """What the template draws: bars, labels, a guide line, and the legend."""

    title: str
    bars: list[Bar] = field(default_factory=list)
    labels: list[Label] = field(default_factory=list)
    legend: list[Series] = field(default_factory=list)
    #: A horizontal guide (e.g. the budget's daily share): its height and words.
    guide: tuple[float, str] | None = None
    #: The columns' base line: where it starts, its height, where it ends.
    axis: tuple[float, float, float] | None = None
    width: int = WIDTH
    height: int = HEIGHT
    #: Said instead of the chart when there is nothing to draw, and why.
    note: str = ""

    @property
    def linked(self) -> bool:
        """Whether a bar is a link: the chart is then a group of links, not
        a picture (which may hold nothing to focus)."""
        return any(bar.link for bar in self.bars)


def _scale_top(largest: float) -> float:
    """A round top for the scale at or above the largest value."""
    if largest <= 0:
        return 1.0
    step = 10 ** (len(str(int(largest))) - 1) if largest >= 1 else 0.1
    top = step
    while top < largest:
        top += step
    return float(top)


def _number(value: float) -> str:
    return f"{value:,.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"


def columns_chart(
    title: str,
    columns: Sequence[str],
    series: Sequence[Series],
    guide: tuple[float, str] | None = None,
) -> Chart:
    """Stacked columns, one per entry of ``columns`` (days, usually), with the
    scale's top and bottom and every few columns' name underneath."""
    chart = Chart(title=title, legend=list(series), axis=(LEFT, HEIGHT - BOTTOM, WIDTH))
    totals = [sum(float(s.values[n]) for s in series) for n in range(len(columns))]
    top = _scale_top(max([*totals, guide[0] if guide else 0.0, 0.0]))
    plot_height = HEIGHT - BOTTOM - TOP
    slot = (WIDTH - LEFT) / max(len(columns), 1)
    every = max(1, len(columns) // 8)
    for n, column in enumerate(columns):
        base = float(HEIGHT - BOTTOM)
        for one in series:
            value = float(one.values[n])
            height = plot_height * value / top
            if height > 0:
                base -= height
                chart.bars.append(
                    Bar(
                        x=LEFT + n * slot + slot * 0.1,
                        y=base,
                        width=slot * 0.8,
                        height=height,
                        css=one.css,
                        title=f"{column} · {one.name}: {_number(value)}",
                        link=one.links[n] if one.links else None,
                    )
                )
        if n % every == 0:
            minor = "minor" if n % (2 * every) else ""
            chart.labels.append(
                Label(LEFT + (n + 0.5) * slot, HEIGHT - 6, column, css=minor)
            )
    chart.labels += [
        Label(LEFT - 4, TOP + 10, _number(top), "end"),
        Label(LEFT - 4, HEIGHT - BOTTOM, "0", "end"),
    ]
    if guide is not None:
        chart.guide = (HEIGHT - BOTTOM - plot_height * guide[0] / top, guide[1])
    return chart


def rows_chart(title: str, rows: Sequence[str], series: Sequence[Series]) -> Chart:
    """Stacked bars across, one row per entry of ``rows`` (tools), named on the
    left above their bar."""
    row_height = 30
    height = TOP + row_height * max(len(rows), 1) + 4
    chart = Chart(title=title, legend=list(series), height=height)
    totals = [sum(float(s.values[n]) for s in series) for n in range(len(rows))]
    top = _scale_top(max([*totals, 0.0]))
    for n, row in enumerate(rows):
        y = TOP + n * row_height
        chart.labels.append(Label(0, y + 10, f"{row} ({_number(totals[n])})", "start"))
        left = 0.0
        for one in series:
            value = float(one.values[n])
            width = WIDTH * value / top
            if width > 0:
                chart.bars.append(
                    Bar(
                        x=left,
                        y=y + 13,
                        width=width,
                        height=12,
                        css=one.css,
                        title=f"{row} · {one.name}: {_number(value)}",
                        link=one.links[n] if one.links else None,
                    )
                )
                left += width
    return chart


def day_names(days: Sequence[datetime.date]) -> list[str]:
    return [f"{day:%d/%m}" for day in days]
