"""How a slider panel turns its figure into PNG bytes, quickly enough to follow a slider.

``PanelCanvas().png(fig)`` draws the figure once on an Agg canvas the figure keeps and encodes it
with zlib's fastest level. Compared with ``style.figure_png`` (what a figure ending a cell gets):

* no tight crop: the crop draws the figure a second time to measure it, while the figures'
  constrained layout already keeps every label on the canvas (a white border of ``BORDER`` pixels
  stands in for the crop's margin);
* the same figure drawn again (a panel updates its artists rather than making a new figure) keeps
  its canvas, and with it the renderer's cache of text sizes;
* the layout is worked out again only when something it depends on changed (``layout_key``: the
  tick labels' sizes, the axis labels, the number and length of title lines). Constrained layout
  is about half of a draw; when only the data, the legends or the marks inside the axes moved,
  the axes stay where the last layout put them, which is where it would put them again
  (tests/test_plotting.py checks every pixel against a new figure's after random slider moves).

In the lab's Pyodide (under Node.js, benchmarks/slider_profile.py, one run on a loaded machine) an
α step of lesson 1's panels 1️⃣/3️⃣/4️⃣ took 0.52/0.44/0.50 s with a new figure and ``figure_png``,
and 0.07/0.08/0.09 s with the panel's figure updated and drawn here.
"""
from __future__ import annotations

import io

# zlib's fastest level: about a third less time than the default 6, and for these flat-coloured
# figures files within a few per cent of its size
COMPRESS_LEVEL = 1
# white pixels around the canvas: constrained layout leaves about 4, figure_png's crop 10
BORDER = 6


def _lines(text) -> tuple:
    """What of a title the layout sees: its lines' lengths (their height, and a width only
    when a line is longer than its axes)."""
    return tuple(len(line) for line in text.get_text().split("\n")) if text.get_text() else ()


def _tick_labels(axis, size_of) -> tuple:
    """What of an axis' tick labels the layout sees: the largest label across the axis (the
    margin it needs) and, at the far end of the axis, the labels close enough to stick out past
    the axes, with their exact places. The near ends don't count: past the bottom of the y axis
    are the x axis' labels, past the left of the x axis the y axis' labels, which reach further;
    nor does the top of the y axis under a title. The labels in between may change freely."""
    low, high = sorted(axis.get_view_interval())
    span = (high - low) or 1.0
    locs = [loc for loc in axis.get_majorticklocs() if low - 1e-9 * span <= loc <= high + 1e-9 * span]
    labels = axis.get_major_formatter().format_ticks(locs)
    sizes = [size_of(label, axis.majorTicks[0].label1) for label in labels]
    across, along = (1, 0) if axis.axis_name == "x" else (0, 1)
    length = (axis.axes.bbox.width if axis.axis_name == "x" else axis.axes.bbox.height) or 1.0
    ends = ()
    if axis.axis_name == "x" or not axis.axes.get_title():
        ends = tuple((label, round((high - loc) / span, 9)) for loc, label, size in zip(locs, labels, sizes)
                     if (high - loc) / span * length < size[along] / 2 + 1)
    return max((size[across] for size in sizes), default=0), ends


def layout_key(fig, size_of) -> tuple:
    """Everything of `fig` the constrained layout depends on, for the figures of this package:
    the size, each axes' tick labels (``_tick_labels``), axis labels and titles, and the figure's
    suptitle. Legends, curves and annotations stay inside their axes (the figures keep them
    there), so they move nothing. ``size_of(text, like)`` is a label's (width, height) in pixels."""
    key = [tuple(fig.get_size_inches()), fig.dpi, _lines(fig._suptitle) if fig._suptitle else ()]
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            key.append(_tick_labels(axis, size_of))
            key.append(axis.get_label().get_text())
        key.append(tuple(_lines(title) for title in (ax.title, ax._left_title, ax._right_title)))
    return tuple(key)


class PanelCanvas:
    """Draws one panel's figures; remembers the layout of the last one."""

    def __init__(self):
        self._figure, self._key = None, None
        self._sizes = {}

    def _size_of(self, text: str, like) -> tuple:
        """(width, height) in pixels of `text` in the font of the Text `like`, remembered."""
        prop = like.get_fontproperties()
        key = (text, hash(prop))
        if key not in self._sizes:
            renderer = self._figure.canvas.get_renderer()
            width, height, _ = renderer.get_text_width_height_descent(text, prop, ismath=False)
            self._sizes[key] = (width, height)
        return self._sizes[key]

    def png(self, fig) -> bytes:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from PIL import Image, ImageOps

        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        engine = fig.get_layout_engine()
        key = layout_key(fig, self._size_of) if fig is self._figure else None
        if key is not None and key == self._key and engine is not None:
            fig.set_layout_engine("none")      # the axes stay where the last layout put them
            try:
                canvas.draw()
            finally:
                fig.set_layout_engine(engine)
        else:
            canvas.draw()
            self._figure = fig
            key = layout_key(fig, self._size_of)   # with the axes where this layout put them
        self._key = key
        image = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba(), "raw", "RGBA", 0, 1)
        image = ImageOps.expand(image, border=BORDER, fill=(255, 255, 255, 255))
        buf = io.BytesIO()
        image.save(buf, format="png", compress_level=COMPRESS_LEVEL)
        return buf.getvalue()
