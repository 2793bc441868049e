"""Pictures of drawings: SVG (or PNG with matplotlib), edges coloured by their crossings."""
from __future__ import annotations

import html
import os
from typing import Any, Union

import numpy as np

from ._checks import _check_progress, _int_arg, _path_arg
from . import crossings
from .io import _check_output, _write_bytes
from .model import Drawing, Evaluation, _check_drawing


# ---------------------------------------------------------------------------------------------- drawing
_RAMP = [(0x31, 0x36, 0x95), (0x45, 0x75, 0xB4), (0x74, 0xAD, 0xD1), (0xAB, 0xD9, 0xE9), (0xFE, 0xE0, 0x90),
         (0xFD, 0xAE, 0x61), (0xF4, 0x6D, 0x43)]  # blue (few crossings) to orange (many)
_AT_K = "#d7191c"
_VIOLATION = "#e7298a"  # rings around the vertices of violations
DRAW_FORMATS = (".svg", ".png")
MIN_SIZE, MAX_SIZE = 64, 16384


def _color(c: int, k: int) -> str:
    if k <= 0:
        return "#%02x%02x%02x" % _RAMP[0]
    f = (len(_RAMP) - 1) * min(c, k) / k
    i = min(int(f), len(_RAMP) - 2)
    t = f - i
    rgb = [round(a + (b - a) * t) for a, b in zip(_RAMP[i], _RAMP[i + 1])]
    return "#%02x%02x%02x" % tuple(rgb)


def _format_of(path: str, fn: str = "lcn.draw") -> str:
    ext = os.path.splitext(path)[1].lower()
    if ext not in DRAW_FORMATS:
        raise ValueError(f"{fn}: path {path!r} has extension {ext or '(none)'!r}; accepted: "
                         + ", ".join(DRAW_FORMATS) + " (PNG needs matplotlib)")
    return ext[1:]


def _matplotlib():
    try:
        import matplotlib
    except ImportError:
        raise ModuleNotFoundError("lcn.draw: PNG output needs matplotlib: pip install 'ironkernels[plot]' "
                                  "(or write .svg)", name="matplotlib") from None
    return matplotlib


def _legend(k: int, edges_at_k: int, m: int) -> list:
    """(colour, label) of the legend: a few counts of the ramp, then the red edges at k."""
    if m == 0:
        return []
    if k == 0:
        return [(_AT_K, f"0 = k ({edges_at_k} edges)")]
    steps = min(k, 6)
    counts = sorted({round(i * (k - 1) / max(steps - 1, 1)) for i in range(steps)})
    return [(_color(c, k), str(c)) for c in counts] + [(_AT_K, f"{k} = k ({edges_at_k} edges)")]


def _violation_vertices(drawing: Drawing, ev: Evaluation) -> list:
    """Indices of the vertices named by the violations (the vertex on an edge, both of a shared point,
    the one outside the grid), in order."""
    try:
        index = {nid: i for i, nid in enumerate(drawing.ids)}
    except TypeError:
        return []
    out = []
    for v in ev.violations:
        for nid in (v[1], v[2]) if v[0] == "same_point" else (v[1],):
            if nid in index and index[nid] not in out:
                out.append(index[nid])
    return out


def _titles(drawing: Drawing, ev: Evaluation, marked: list) -> list:
    lines = [f"n={drawing.n} m={drawing.m} k={ev.k} edges at k={ev.edges_at_k} total={ev.total_crossings}"]
    if not ev.valid:
        kinds = {}
        for v in ev.violations:
            kinds[v[0]] = kinds.get(v[0], 0) + 1
        shown = ", ".join(str(drawing.ids[i]) for i in marked[:6]) + (" …" if len(marked) > 6 else "")
        lines.append(f"INVALID ({len(ev.violations)} violations: "
                     + ", ".join(f"{c} {k}" for k, c in kinds.items()) + f"); circled: {shown}")
    return lines


def draw(drawing: Drawing, path: Union[str, os.PathLike], evaluation: Evaluation = None, size: int = 900, *,
         progress: Any = None) -> None:
    """Picture of a drawing, `size` × `size` pixels (the grid box [0, W]×[0, H] fitted inside, aspect
    kept): edges coloured by their crossing count (blue few … orange many), the edges at k on top in red
    and thicker, vertices as small dots, y growing upwards; a title with n, m, k, edges at k and the total;
    a legend of the colours with their counts; for an invalid drawing the vertices of the violations
    circled in magenta and listed in the title.

    The format follows the extension: .svg, or .png (needs matplotlib: pip install 'ironkernels[plot]');
    others are a ValueError. Everything is checked before anything is computed or written (the drawing,
    `evaluation` if given, size in [64, 16384], the path); the file is replaced atomically."""
    p = _path_arg(path, "lcn.draw")
    fmt = _format_of(p)
    size = _int_arg(size, "size", "lcn.draw", MIN_SIZE, MAX_SIZE)
    xy, edges, width, height = _check_drawing(drawing, "lcn.draw")
    if evaluation is not None:
        if not isinstance(evaluation, Evaluation):
            raise TypeError(f"lcn.draw: evaluation is a {type(evaluation).__name__}; accepted: None or the "
                            "lcn.Evaluation of the drawing")
        if np.shape(evaluation.edge_crossings) != (len(edges),):
            raise ValueError(f"lcn.draw: evaluation has {np.size(evaluation.edge_crossings)} edge counts for "
                             f"{len(edges)} edges; accepted: the lcn.Evaluation of this drawing")
    _check_progress(progress, "lcn.draw")
    if fmt == "png":
        _matplotlib()
    _check_output(p, "lcn.draw")
    ev = crossings.evaluate(drawing, progress=progress) if evaluation is None else evaluation
    pic = _Picture(drawing, xy, edges, width, height, ev, size)
    _write_bytes(p, pic.png() if fmt == "png" else pic.svg().encode("utf-8"), "lcn.draw")


class _Picture:
    """The layout shared by SVG and PNG, in pixels from the top left: a title band, the drawing area,
    a legend band."""

    def __init__(self, drawing, xy, edges, width, height, ev, size):
        self.d, self.xy, self.edges, self.ev, self.size = drawing, xy, edges, ev, size
        # The picture spans the grid box and every vertex (one outside the grid is shown where it is).
        self.gw, self.gh = width, height
        self.w = max(width, int(xy[:, 0].max()) if len(xy) else 0, 1)
        self.h = max(height, int(xy[:, 1].max()) if len(xy) else 0, 1)
        self.marked = _violation_vertices(drawing, ev)
        self.titles = _titles(drawing, ev, self.marked)
        self.font = max(8.0, min(15.0, size / 60))
        self.top = self.font * (1.6 * len(self.titles) + 0.6)
        self.legend = _legend(ev.k, ev.edges_at_k, len(edges))
        self.bottom = self.font * 3.4
        margin = max(6.0, size * 0.02)
        area_w, area_h = size - 2 * margin, size - self.top - self.bottom - 2 * margin
        self.scale = max(min(area_w / self.w, area_h / self.h), 1e-9)
        self.x0 = margin + (area_w - self.w * self.scale) / 2
        self.y0 = self.top + margin + (area_h - self.h * self.scale) / 2
        counts = np.asarray(ev.edge_crossings)
        self.order = np.argsort(counts, kind="stable")  # most crossed last, on top
        self.at_k = counts == ev.k if len(edges) else np.zeros(0, bool)
        self.counts = counts
        self.radius = max(1.2, min(3.0, 300 / max(len(xy), 1))) * size / 900

    def px(self, x):
        return self.x0 + x * self.scale

    def title_font(self, line: str) -> float:
        """The title's font size in pixels, smaller for a line that would not fit the width."""
        return min(self.font, 0.95 * self.size / (0.56 * max(len(line), 1)))

    def py(self, y):
        return self.y0 + (self.h - y) * self.scale

    def color(self, e):
        return _AT_K if self.at_k[e] else _color(int(self.counts[e]), self.ev.k)

    def svg(self) -> str:
        size, f = self.size, self.font
        out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
               f'<rect width="{size}" height="{size}" fill="white"/>']
        for i, line in enumerate(self.titles):
            out.append(f'<text x="{size / 2:.1f}" y="{f * (1.6 * i + 1.4):.1f}" text-anchor="middle" '
                       f'font-family="sans-serif" font-size="{self.title_font(line):.1f}">{html.escape(line)}</text>')
        out.append(f'<rect x="{self.px(0):.2f}" y="{self.py(self.gh):.2f}" width="{self.gw * self.scale:.2f}" '
                   f'height="{self.gh * self.scale:.2f}" fill="none" stroke="#888" stroke-width="1"/>')
        thin, thick = max(0.5, 0.7 * size / 900), max(1.0, 1.8 * size / 900)
        for e in self.order:
            (x0, y0), (x1, y1) = self.xy[self.edges[e, 0]], self.xy[self.edges[e, 1]]
            out.append(f'<line x1="{self.px(x0):.2f}" y1="{self.py(y0):.2f}" x2="{self.px(x1):.2f}" '
                       f'y2="{self.py(y1):.2f}" stroke="{self.color(e)}" stroke-width="{thick if self.at_k[e] else thin}"/>')
        out.extend(f'<circle cx="{self.px(x):.2f}" cy="{self.py(y):.2f}" r="{self.radius:.2f}" fill="black"/>'
                   for x, y in self.xy.tolist())
        ring = max(4.0, 3 * self.radius)
        out.extend(f'<circle class="violation" cx="{self.px(self.xy[v, 0]):.2f}" cy="{self.py(self.xy[v, 1]):.2f}" '
                   f'r="{ring:.2f}" fill="none" stroke="{_VIOLATION}" stroke-width="{thick:.2f}"/>' for v in self.marked)
        # The legend: "crossings per edge" and a swatch per entry, along the bottom band.
        y = size - self.bottom / 2
        x = size * 0.03
        out.append(f'<g class="legend" font-family="sans-serif" font-size="{f * 0.9:.1f}">')
        if self.legend:
            out.append(f'<text x="{x:.1f}" y="{y + f * 0.3:.1f}">crossings per edge:</text>')
            x += f * 9.5
        for color, label in self.legend:
            out.append(f'<rect x="{x:.1f}" y="{y - f * 0.35:.1f}" width="{f * 1.6:.1f}" height="{f * 0.7:.1f}" fill="{color}"/>')
            out.append(f'<text x="{x + f * 1.9:.1f}" y="{y + f * 0.3:.1f}">{html.escape(label)}</text>')
            x += f * (2.6 + 0.55 * len(label))
        if self.marked:
            out.append(f'<rect x="{x:.1f}" y="{y - f * 0.5:.1f}" width="{f:.1f}" height="{f:.1f}" rx="{f / 2:.1f}" '
                       f'fill="none" stroke="{_VIOLATION}" stroke-width="2"/>')
            out.append(f'<text x="{x + f * 1.3:.1f}" y="{y + f * 0.3:.1f}">violation</text>')
        out.append("</g>")
        out.append("</svg>")
        return "\n".join(out)

    def png(self) -> bytes:
        import io

        _matplotlib().use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.collections import LineCollection
        from matplotlib.lines import Line2D
        from matplotlib.patches import Patch, Rectangle

        size = self.size
        pt = 72 / size  # points per pixel at dpi = size on a 1-inch figure: exactly size × size pixels
        fig = plt.figure(figsize=(1, 1), dpi=size)
        try:
            ax = fig.add_axes([self.x0 / size, 1 - (self.y0 + self.h * self.scale) / size,
                               self.w * self.scale / size, self.h * self.scale / size])
            thin, thick = max(0.5, 0.7 * size / 900), max(1.0, 1.8 * size / 900)
            segs = [[tuple(self.xy[s]), tuple(self.xy[t])] for s, t in self.edges[self.order]]
            ax.add_collection(LineCollection(segs, colors=[self.color(e) for e in self.order],
                                             linewidths=[(thick if self.at_k[e] else thin) * pt for e in self.order],
                                             clip_on=False))
            if len(self.xy):
                ax.scatter(self.xy[:, 0], self.xy[:, 1], s=(2 * self.radius * pt) ** 2, c="black", zorder=3, linewidths=0,
                           clip_on=False)
            if self.marked:
                ring = max(4.0, 3 * self.radius)
                ax.scatter(self.xy[self.marked, 0], self.xy[self.marked, 1], s=(2 * ring * pt) ** 2, facecolors="none",
                           edgecolors=_VIOLATION, linewidths=thick * pt, zorder=4, clip_on=False)
            ax.add_patch(Rectangle((0, 0), self.gw, self.gh, fill=False, ec="#888888", lw=pt, clip_on=False, zorder=0))
            ax.set_xlim(0, self.w)
            ax.set_ylim(0, self.h)
            ax.axis("off")
            for i, line in enumerate(self.titles):
                fig.text(0.5, 1 - self.font * (1.6 * i + 1.4) / size, line, ha="center", va="baseline",
                         fontsize=self.title_font(line) * pt)
            handles = [Patch(color=c, label=label) for c, label in self.legend]
            if self.marked:
                handles.append(Line2D([], [], marker="o", ls="", fillstyle="none", markeredgecolor=_VIOLATION,
                                      markersize=self.font * pt, label="violation"))
            if handles:
                fig.legend(handles=handles, loc="lower center", ncol=len(handles), frameon=False,
                           fontsize=self.font * 0.9 * pt, title="crossings per edge" if self.legend else None,
                           title_fontsize=self.font * 0.9 * pt, handlelength=1.4, columnspacing=1.0,
                           borderaxespad=0.2)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", dpi=size)
            return buf.getvalue()
        finally:
            plt.close(fig)
