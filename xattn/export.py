"""Export: the weights as CSV, figures as one standalone HTML page, toolbar download settings.

CSV. Long format, one row per (head, target, source) weight. Tokens are quoted as CSV requires,
and a token that a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@``, tab or carriage
return first) gets a ``'`` in front (OWASP's advice); the ``.npz`` download keeps tokens exactly.

PNG and SVG. Plotly's toolbar has a single "download" button (the camera) whose format is set by
the ``toImageButtonOptions`` config, so one chart in Streamlit can offer either a PNG or an SVG
(`toolbar_config`). The standalone page adds a second, custom toolbar button (disk icon) that
calls ``Plotly.downloadImage(gd, {format: "svg"})``, so every figure there offers both: the
camera gives a PNG at twice the screen resolution, the disk an SVG, both with a file name made
from the page title and the figure heading. Custom buttons need a JavaScript function, which a
JSON config (as passed by ``st.plotly_chart``) cannot carry; that is why this is page-only.
"""

from __future__ import annotations

import csv
import html
import io
import json
import re
import unicodedata

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
from plotly.offline import get_plotlyjs

from xattn._checks import check_tokens
from xattn.literal import csv_cell

__all__ = ["standalone_html", "toolbar_config", "IMAGE_FORMATS", "weights_csv", "file_name",
           "FORMULA_HTML"]

IMAGE_FORMATS = ("png", "svg", "jpeg", "webp")
_FALLBACK_NAME = "xattn-figure"
_MAX_NAME = 80

# Defined once after the bundle; each figure then calls it with its JSON and its config.
_PLOT_FUNCTION = """
function xattnPlot(id, fig, config) {
  var filename = config.toImageButtonOptions.filename;
  config.modeBarButtonsToAdd = [{
    name: "downloadSvg",
    title: "Download plot as an SVG",
    icon: Plotly.Icons.disk,
    click: function (gd) { Plotly.downloadImage(gd, {format: "svg", filename: filename}); }
  }];
  // frames: an animated figure (the training time-lapse) plays offline too
  Plotly.newPlot(id, {data: fig.data, layout: fig.layout, frames: fig.frames || [],
                      config: config});
}
"""

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;
       color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.2em; margin-top: 2em; }
.xattn-figure { width: 100%; }
.formula { font-family: "Latin Modern Math", "STIX Two Math", "Cambria Math", serif;
           font-size: 1.15em; line-height: 1.9; }
"""


def toolbar_config(filename: str, fmt: str = "png") -> dict:
    """Plotly config whose toolbar download button saves ``filename.<fmt>``.

    For ``st.plotly_chart(fig, config=toolbar_config("heads"))`` or ``fig.show(config=...)``.

    Parameters
    ----------
    filename : str
        A readable name, e.g. the sentence pair or the view. It is made safe for every file
        system: accents dropped, anything but letters, digits, ``.``, ``_`` and ``-`` turned
        into ``-``, at most 80 characters, a trailing image extension removed (Plotly adds
        one). Falls back to ``"xattn-figure"`` when nothing is left.
    fmt : {"png", "svg", "jpeg", "webp"}, default "png"
        Format of the toolbar's download button. PNGs are saved at twice the screen size.

    Returns
    -------
    dict
        ``{"toImageButtonOptions": {"format", "filename", "scale"}, "displaylogo": False,
        "showSendToCloud": False}``: no Plotly logo, and no "Share chart..." button (plotly.js 4
        shows one that uploads the figure to Plotly Cloud).

    Examples
    --------
    >>> toolbar_config("Head 3: le chat / the cat.png")["toImageButtonOptions"]
    {'format': 'png', 'filename': 'Head-3-le-chat-the-cat', 'scale': 2}
    """
    if fmt not in IMAGE_FORMATS:
        raise ValueError(f"fmt must be one of {IMAGE_FORMATS}; received {fmt!r}.")
    return {"toImageButtonOptions": {"format": fmt, "filename": file_name(filename),
                                     "scale": 2},
            "displaylogo": False, "showSendToCloud": False}


def file_name(name) -> str:
    """``name`` made safe for every file system (see `toolbar_config`), without extension.

    Examples
    --------
    >>> file_name("xattn 4 heads: le chat / the cat")
    'xattn-4-heads-le-chat-the-cat'
    """
    text = unicodedata.normalize("NFKD", str(name)).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"\.(png|svg|jpe?g|webp)$", "", text.strip(), flags=re.IGNORECASE)
    text = re.sub(r"[^A-Za-z0-9._-]+", "-", text)
    text = re.sub(r"-{2,}", "-", text).strip("._-")
    return text[:_MAX_NAME].rstrip("._-") or _FALLBACK_NAME


def weights_csv(weights, src_tokens, tgt_tokens) -> str:
    """The weights in long format, one row per weight.

    Parameters
    ----------
    weights : array_like of shape (n_heads, n_tgt, n_src) or (n_layers, n_heads, n_tgt, n_src)
    src_tokens, tgt_tokens : sequence of str

    Returns
    -------
    str
        Columns ``[layer,] head, tgt_pos, tgt_token, src_pos, src_token, weight``; layers and
        heads count from 1, positions from 0; weights to 6 significant digits. Formula-like
        tokens are prefixed with ``'``.

    Examples
    --------
    Lines end with CRLF (RFC 4180), so a field holding a carriage return is quoted too.

    >>> weights_csv([[[1.0, 0.0]]], ["=A1", "b"], ["x"]).splitlines()
    ['head,tgt_pos,tgt_token,src_pos,src_token,weight', "1,0,x,0,'=A1,1", '1,0,x,1,b,0']
    """
    src_tokens = check_tokens(src_tokens, None, "src_tokens")
    tgt_tokens = check_tokens(tgt_tokens, None, "tgt_tokens")
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim not in (3, 4) or w.shape[-2:] != (len(tgt_tokens), len(src_tokens)):
        raise ValueError(f"weights must have shape ([n_layers,] n_heads, {len(tgt_tokens)}, "
                         f"{len(src_tokens)}) to match the tokens; received {w.shape}.")
    layered = w.ndim == 4
    w = w if layered else w[None]                              # (n_layers, h, n_tgt, n_src)
    src = [csv_cell(t) for t in src_tokens]
    tgt = [csv_cell(t) for t in tgt_tokens]
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow((["layer"] if layered else []) + ["head", "tgt_pos", "tgt_token", "src_pos",
                                                       "src_token", "weight"])
    for layer, heads in enumerate(w):
        lead = [layer + 1] if layered else []
        for h, head in enumerate(heads):
            for i, row in enumerate(head):
                writer.writerows([*lead, h + 1, i, tgt[i], j, src[j], f"{row[j]:.6g}"]
                                 for j in range(len(src)))
    return buf.getvalue()


def _script_json(obj) -> str:
    """JSON that cannot close a <script> element or open a comment inside it."""
    text = obj if isinstance(obj, str) else json.dumps(obj)
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


# The cross-attention formula as HTML (no MathJax in an offline page): it reads as maths.
FORMULA_HTML = (
    "MultiHead(<i>Q</i>, <i>K</i>, <i>V</i>) = Concat(head<sub>1</sub>, …, "
    "head<sub><i>h</i></sub>)&#8201;<i>W</i><sup>O</sup><br>"
    "head<sub><i>i</i></sub> = softmax(&#8201;<i>Q</i>&#8201;<i>W</i><sub><i>i</i></sub>"
    "<sup>Q</sup>&#8201;(<i>K</i>&#8201;<i>W</i><sub><i>i</i></sub><sup>K</sup>)<sup>⊤</sup> "
    "/ √<i>d</i><sub>k</sub> + <i>M</i>&#8201;)&#8201;<i>V</i>&#8201;<i>W</i><sub><i>i</i></sub>"
    "<sup>V</sup>")


def standalone_html(figures: list[tuple[str, go.Figure]], *, title: str,
                    description: str = "", name: str | None = None,
                    formula: bool = False) -> str:
    """One self-contained HTML page holding every figure; it opens offline in any browser.

    Plotly's JavaScript bundle is inlined once in the page head (about 4.8 MB); no CDN, no
    MathJax, no network. Each figure gets a heading and a toolbar that downloads a PNG (camera)
    or an SVG (disk), named after ``title`` and the heading. Figures are drawn with their own
    template: build them with an explicit one so they look as they did in the app.

    Parameters
    ----------
    figures : list of (str, plotly.graph_objects.Figure)
        Heading and figure, in page order. Headings are plain text (HTML-escaped).
    title : str
        Page title and top heading (plain text).
    description : str, default ""
        Plain text under the title; blank lines separate paragraphs.
    name : str, optional
        Start of every image file name (e.g. the settings); default the title.
    formula : bool, default False
        Show the multi-head cross-attention formula (`FORMULA_HTML`) under the description.

    Returns
    -------
    str
        The HTML document. Figure ``k`` lives in ``<div id="xattn-figure-k">``.

    Examples
    --------
    >>> import plotly.graph_objects as go
    >>> page = standalone_html([("Bars", go.Figure(go.Bar(y=[1, 2])))], title="A <demo>")
    >>> "<h1>A &lt;demo&gt;</h1>" in page, page.count('id="xattn-figure-')
    (True, 1)
    """
    figures = _check_figures(figures)
    if not isinstance(title, str) or not isinstance(description, str):
        raise ValueError(f"title and description must be str; received "
                         f"{type(title).__name__} and {type(description).__name__}.")
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", description) if p.strip()]
    body = [f"<h1>{html.escape(title)}</h1>"]
    body += [f"<p>{html.escape(p)}</p>" for p in paragraphs]
    if formula:
        body.append(f'<p class="formula">{FORMULA_HTML}</p>')
    for k, (heading, fig) in enumerate(figures):
        div_id = f"xattn-figure-{k}"
        config = toolbar_config(f"{name or title} {heading}") | {"responsive": True}
        body.append(
            f'<section>\n<h2>{html.escape(heading)}</h2>\n'
            f'<div id="{div_id}" class="xattn-figure"></div>\n'
            f'<script>xattnPlot("{div_id}", {_script_json(pio.to_json(fig, validate=False))}, '
            f"{_script_json(config)});</script>\n</section>")
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(title)}</title>", f"<style>{_STYLE}</style>",
        "<script>window.PlotlyConfig = {MathJaxConfig: 'local'};</script>",
        f'<script type="text/javascript">{get_plotlyjs()}</script>',
        f"<script>{_PLOT_FUNCTION}</script>", "</head>", "<body>", *body, "</body>", "</html>",
        ""])


def _check_figures(figures) -> list[tuple[str, go.Figure]]:
    try:
        pairs = list(figures)
    except TypeError:
        raise ValueError(f"figures must be a list of (heading, figure) pairs; received "
                         f"{type(figures).__name__}.") from None
    if not pairs:
        raise ValueError("figures must hold at least one (heading, figure) pair; received an "
                         "empty list.")
    for k, pair in enumerate(pairs):
        ok = (isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[0], str)
              and isinstance(pair[1], go.Figure))
        if not ok:
            raise ValueError(f"figures[{k}] must be a (str, plotly.graph_objects.Figure) pair; "
                             f"received {type(pair).__name__} {_describe(pair)}.")
    return pairs


def _describe(pair) -> str:
    if isinstance(pair, tuple):
        return "(" + ", ".join(type(x).__name__ for x in pair) + ")"
    return ""
