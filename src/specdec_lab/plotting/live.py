"""Slider panels: sliders in front of a lesson-1 figure, redrawn when a slider is released.

``explore_tokens`` (1️⃣), ``explore_speedup`` (3️⃣) and ``explore_serving`` (4️⃣) each return a
``LiveFigure``. A step updates the panel's one figure (``figures.TokensPlot`` and friends) rather
than making a new one, and ``canvas.PanelCanvas`` draws it once, keeping the last layout when no
label changed its size: in the lab's Pyodide that is about a third of the time a new figure and
``figure_png`` took (``benchmarks/slider_profile.py``). ipywidgets is imported only when a panel is made, so the figures work without it;
Pyodide's scan of a cell's imports cannot see that import, which is why the lab lists ipywidgets
among the wheel's dependencies (``site/lab/runtime.toml``).
"""
from __future__ import annotations

import base64
import contextlib
import io

from .. import _validate as check
from ..monte_carlo import monte_carlo_check
from ..serving import DEFAULT_T_FLOP
from .canvas import PanelCanvas
from .figures import ServingPlot, SpeedupPlot, TokensPlot


class LiveFigure:
    """Sliders and the figure they redraw (when a slider is released).

    Shown in a notebook it is an ipywidgets box: the sliders, then an Output widget whose
    contents are set directly (no output capturing, so it behaves the same in ipykernel, in
    Pyodide and under nbclient). The display also carries the current figure as a plain PNG, so
    a notebook stored with its outputs (widget views stripped, see ``notebooks/execute.py``)
    shows the figure before any kernel runs. Text that ``draw`` prints appears above the figure.
    """

    def __init__(self, draw, **sliders):
        import ipywidgets

        self._draw = draw
        self.sliders = sliders
        self.output = ipywidgets.Output()
        self.widget = ipywidgets.VBox([*sliders.values(), self.output])
        self._png = b""
        self._canvas = PanelCanvas()
        for slider in sliders.values():
            slider.observe(self._redraw, names="value")
        self._redraw()

    @property
    def values(self) -> dict:
        return {name: slider.value for name, slider in self.sliders.items()}

    @property
    def png(self) -> bytes:
        """The figure currently shown, as PNG bytes."""
        return self._png

    def _redraw(self, change=None) -> None:
        printed = io.StringIO()
        outputs = []
        try:
            with contextlib.redirect_stdout(printed):
                fig = self._draw(**self.values)
            self._png = self._canvas.png(fig)
        except Exception as error:  # shown where the figure would be, not lost in a kernel log
            outputs.append({"output_type": "stream", "name": "stderr",
                            "text": f"{type(error).__name__}: {error}\n"})
        else:
            png = base64.b64encode(self._png).decode("ascii")
            outputs.append({"output_type": "display_data", "metadata": {},
                            "data": {"image/png": png, "text/plain": "<圖>"}})
        if printed.getvalue():
            outputs.insert(0, {"output_type": "stream", "name": "stdout", "text": printed.getvalue()})
        self.output.outputs = tuple(outputs)

    def _repr_mimebundle_(self, include=None, exclude=None):
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        data = dict(bundle[0] if isinstance(bundle, tuple) else bundle)
        data["image/png"] = base64.b64encode(self._png).decode("ascii")
        return data


def _float_slider(name: str, value, low: float, high: float, step: float, description: str,
                  fmt: str):
    """A slider for the parameter ``name``. A start value outside the slider is refused: the
    slider would silently clamp it, and the figure would show a number nobody asked for."""
    import ipywidgets

    check.scalar(name, value)
    value = float(check.between(name, value, low, high, what="滑桿範圍內的數"))
    return ipywidgets.FloatSlider(value=value, min=low, max=high, step=step, readout_format=fmt,
                                  **_slider_look(ipywidgets, description))


def _int_slider(name: str, value, low: int, high: int, description: str):
    """Like ``_float_slider``, for an integer parameter (step 1)."""
    import ipywidgets

    value = check.scalar_int(name, value, minimum=low, maximum=high)
    return ipywidgets.IntSlider(value=value, min=low, max=high, step=1,
                                **_slider_look(ipywidgets, description))


def _slider_look(ipywidgets, description: str) -> dict:
    """Label and width shared by every slider; redraw only when the slider is released. The
    tooltip repeats the label: without one, ipywidgets 8 gives the label the title "null", which a
    mouse resting on it showed."""
    return dict(description=description, tooltip=description, continuous_update=False,
                style={"description_width": "7em"},
                layout=ipywidgets.Layout(width="min(100%, 26rem)"))


def _alpha_slider(alpha):
    return _float_slider("alpha", alpha, 0.0, 1.0, 0.01, "接受率 α", ".2f")


def _k_slider(k):
    return _int_slider("k", k, 1, 16, "每輪猜 K 個")


def _draft_cost_slider(draft_cost):
    return _float_slider("draft_cost", draft_cost, 0.0, 0.5, 0.01, "草稿成本", ".0%")


def explore_tokens(alpha: float = 0.8, k: int = 5, rounds: int = 30_000, seed: int = 1) -> LiveFigure:
    """1️⃣ α and K sliders → the Monte Carlo against the closed form, and the histogram."""
    shown = {}        # the histogram of the current K, updated while only α moves

    def draw(alpha, k):
        simulated = monte_carlo_check(alpha, k, rounds=rounds, seed=seed)
        print(simulated)
        if shown.get("plot") is None or shown["plot"].k != k:
            shown["plot"] = TokensPlot(k, rounds)
        return shown["plot"].update(simulated)

    return LiveFigure(draw, alpha=_alpha_slider(alpha), k=_k_slider(k))


def explore_speedup(alpha: float = 0.8, draft_cost: float = 0.05, k_max: int = 20) -> LiveFigure:
    """3️⃣ α and draft-cost sliders → speedup vs K, best K and the knee."""
    plot = SpeedupPlot(k_max)
    return LiveFigure(plot.update, alpha=_alpha_slider(alpha), draft_cost=_draft_cost_slider(draft_cost))


def explore_serving(alpha: float = 0.8, k: int = 5, draft_cost: float = 0.05,
                    t_flop: float = DEFAULT_T_FLOP, max_users: int = 128) -> LiveFigure:
    """4️⃣ α, K, draft cost and t_flop sliders → per-user speed and total throughput."""
    plot = ServingPlot(max_users)
    return LiveFigure(plot.update, alpha=_alpha_slider(alpha), k=_k_slider(k),
                      draft_cost=_draft_cost_slider(draft_cost),
                      t_flop=_float_slider("t_flop", t_flop, 0.002, 0.05, 0.001, "t_flop", ".3f"))


def explore_tree_serving(accuracy=(0.6, 0.2, 0.1), concurrency=(1, 4, 16, 64), max_nodes: int = 64,
                         draft_cost: float = 0.05, t_flop: float = DEFAULT_T_FLOP) -> LiveFigure:
    """Lesson 2's 6️⃣: draft-cost and t_flop sliders → speedup against tree size at a few
    concurrencies (``trees.tree_serving_figure``); the best tree shrinks as the GPU gets busier."""
    from .trees import tree_serving_figure

    def draw(draft_cost, t_flop):
        return tree_serving_figure(accuracy, concurrency, max_nodes=max_nodes, draft_cost=draft_cost,
                                   t_flop=t_flop)

    return LiveFigure(draw, draft_cost=_draft_cost_slider(draft_cost),
                      t_flop=_float_slider("t_flop", t_flop, 0.002, 0.05, 0.001, "t_flop", ".3f"))
