"""Server-drawn charts: plain geometry for an SVG template (no script, no inline style)."""

from __future__ import annotations

from dataclasses import dataclass

from litecrawl.store.dashboard import ActivityBucket

__all__ = ["Bar", "BarChart", "activity_chart"]


@dataclass(frozen=True, slots=True)
class Bar:
    x: float
    width: float
    ok_y: float
    ok_height: float
    error_y: float
    error_height: float
    label: str  # the tooltip


@dataclass(frozen=True, slots=True)
class BarChart:
    width: int
    height: int
    top: int  # y of the plot area's top, where the y axis reads `peak`
    bottom: int  # y of the x axis
    left: int
    peak: int
    bars: list[Bar]
    ticks: list[tuple[float, str]]  # x, label under the axis
    total: int
    errors: int


def activity_chart(
    buckets: list[ActivityBucket], since: int, width_sec: int, count: int, labels: list[str]
) -> BarChart:
    """Stacked bars (ok below, errors above) for ``count`` buckets from ``since``; ``labels``
    names each bucket (the tooltip and, every tenth bucket, the x axis)."""
    width, height, left, top, bottom = 720, 180, 40, 10, 150
    by_index = {(b.start - since) // width_sec: b for b in buckets}
    peak = max((b.fetched for b in buckets), default=0)
    scale = (bottom - top) / peak if peak else 0.0
    step = (width - left - 10) / count
    bars: list[Bar] = []
    ticks: list[tuple[float, str]] = []
    for i in range(count):
        x = left + i * step
        if i % 10 == 0:
            ticks.append((x, labels[i]))
        b = by_index.get(i)
        if b is None:
            continue
        ok_h = (b.fetched - b.errors) * scale
        err_h = b.errors * scale
        bars.append(
            Bar(
                x=round(x + 0.5, 1),
                width=round(max(step - 1, 1.0), 1),
                ok_y=round(bottom - ok_h, 1),
                ok_height=round(ok_h, 1),
                error_y=round(bottom - ok_h - err_h, 1),
                error_height=round(err_h, 1),
                label=f"{labels[i]}: {b.fetched} fetched, {b.errors} errors",
            )
        )
    return BarChart(
        width=width,
        height=height,
        top=top,
        bottom=bottom,
        left=left,
        peak=peak,
        bars=bars,
        ticks=ticks,
        total=sum(b.fetched for b in buckets),
        errors=sum(b.errors for b in buckets),
    )
