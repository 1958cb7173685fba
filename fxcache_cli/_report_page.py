"""``fxcache report``'s page: the report's JSON rendered as one self-contained HTML file.

The page is a rendering of :meth:`fxcache_core.report.cache_report.CacheReport.to_json`
and of nothing else: the template (``report_page/page.html.j2``, Jinja2 with
autoescaping) reads every number and name from that JSON, and marks each number it
shows with the JSON path it came from (``data-json="df.total.bytes"`` and its
``data-value``), so a reader (the browser tests) can check the page against the JSON.
The JSON itself is embedded whole (``<script type="application/json"
id="fxcache-data">``, ``<``, ``>`` and ``&`` written as ``\\u003c``... so no text in it
can end the element); the charts (``report_page/page.js``, Vega-Lite) are drawn from it
in the browser, their data passed as values, never as code.

Everything the page needs is inlined: the styles, the page's script and the charting
library (Vega, Vega-Lite and vega-embed, the bundle of the ``vl-convert-python``
package: the ``report`` extra). A Content-Security-Policy allows those scripts alone
(by their sha256), no eval, no request of any kind.

Untrusted text (names, guards, reasons read from a cache or a trace) is written through
:func:`~fxcache_cli._output.shown` (control characters, bidi controls and undecodable
bytes as escapes), then HTML-escaped by the template engine.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
import time
from importlib import resources
from pathlib import Path
from typing import Any

from ._output import age, shown

PAGE_DIR = "report_page"
MAX_KEY_ROWS = 40
"""Keys listed per function in the page's tables (its JSON holds every key)."""
MAX_LOOKUP_ROWS = 500
"""Lookups listed in the run's table (its JSON holds up to the report's bound)."""
MISSING_EXTRA = "report needs the report extra: pip install 'fxcache[report]' (missing: {})"


def missing_requirements() -> list[str]:
    """The distributions of the ``report`` extra that cannot be imported here."""
    missing = []
    try:
        import jinja2  # noqa: F401
    except ImportError:
        missing.append("jinja2")
    try:
        import vl_convert  # noqa: F401
    except ImportError:
        missing.append("vl-convert-python")
    return missing


def render_page(data: dict[str, Any]) -> str:
    """The page of a report's JSON (:meth:`~fxcache_core.report.cache_report.CacheReport.to_json`).

    Raises:
        ImportError: the ``report`` extra is not installed (:func:`missing_requirements`).
    """
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    env.filters.update(text=_text, size=_size, secs=_secs, short=_short, count=_count)
    page = _asset("page.js")
    library = chart_library()
    scripts = [library, page]
    template = env.from_string(_asset("page.html.j2"))
    return template.render(
        d=data, css=jinja2.utils.markupsafe.Markup(_style_text(_asset("page.css"))), data_json=jinja2.utils.markupsafe.Markup(embedded_json(data)),
        library=jinja2.utils.markupsafe.Markup(_script_text(library)),
        page_js=jinja2.utils.markupsafe.Markup(_script_text(page)),
        csp=" ".join(f"'sha256-{_sha256(s)}'" for s in scripts),
        num=lambda path, fmt="count": _num(data, path, fmt), age=lambda ts: _age(ts, data),
        max_key_rows=MAX_KEY_ROWS, max_lookup_rows=MAX_LOOKUP_ROWS, when=_when(data["generated_at"]))


def embedded_json(data: Any) -> str:
    """``data`` as JSON that can sit inside a ``<script>`` element: ASCII, compact, with
    ``<``, ``>`` and ``&`` escaped (no ``</script>`` or ``<!--`` can appear in it)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def write_page(path: Path, html: str) -> int:
    """Write ``html`` to ``path`` (a temp file beside it, then renamed: a reader never sees
    half a page); returns its size in bytes.

    Raises:
        OSError: the dir does not exist or cannot be written.
    """
    body = html.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=".fxcache-report-", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.chmod(tmp, 0o644 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return len(body)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def chart_library() -> str:
    """Vega, Vega-Lite and vega-embed as one script (``vl_convert.javascript_bundle()``,
    which takes a second or two to bundle): kept in fxcache's own dir
    (:func:`~fxcache_core.state.index.index_dir`) per vl-convert version, made again
    when absent or not what the package writes."""
    import vl_convert

    from fxcache_core.state.index import index_dir

    version = getattr(vl_convert, "__version__", "unknown")
    base = index_dir()
    path = base / f"report-charts-vl-convert-{version}.js" if base is not None else None
    if path is not None:
        from fxcache_core.fsutil import read_capped

        raw = read_capped(path, 16 << 20, follow_symlinks=False)
        if raw is not None and raw.endswith(_BUNDLE_END.encode()):
            return raw.decode("utf-8", "replace")
    text = vl_convert.javascript_bundle()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_page(path, text)
        except OSError:
            pass  # kept nowhere: bundled again next time
    return text


_BUNDLE_END = "window.vegaEmbed=$t6;window.vega=__default;window.vegaLite=__default1;"


def _asset(name: str) -> str:
    return resources.files("fxcache_cli").joinpath(PAGE_DIR, name).read_text(encoding="utf-8")


def _script_text(code: str) -> str:
    """Code to inline in a ``<script>`` element: ``</script`` and ``<!--`` cannot end or
    confuse the element (written ``<\\/script``, ``<\\!--``: the same inside JS strings)."""
    if "</" in code or "<!--" in code:
        code = code.replace("</script", "<\\/script").replace("</SCRIPT", "<\\/SCRIPT").replace("<!--", "<\\!--")
    return code


def _style_text(css: str) -> str:
    """The page's own styles, to inline in a ``<style>`` element (which nothing ends but ``</style``)."""
    if "</" in css:
        raise ValueError("the page's styles hold '</'")
    return css


def _sha256(code: str) -> str:
    return base64.b64encode(hashlib.sha256(_script_text(code).encode("utf-8")).digest()).decode("ascii")


def _text(value: Any) -> str:
    """Untrusted text as the page shows it (:func:`~fxcache_cli._output.shown`); ``-`` for None."""
    return "-" if value is None else shown(str(value))


def _size(n: int | None) -> str:
    from rich.filesize import decimal

    return "-" if n is None else decimal(n)


def _secs(s: float | None) -> str:
    if s is None:
        return "-"
    return f"{s:.1f} s" if abs(s) >= 0.1 else f"{s * 1000:.0f} ms"


def _short(text: str | None, n: int = 16) -> str:
    return "-" if text is None else shown(text[:n])


def _count(n: int | None) -> str:
    return "-" if n is None else f"{n:,}"


_FORMATS = {"count": _count, "size": _size, "secs": _secs}


def _resolve(data: Any, path: str) -> Any:
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def _num(data: dict[str, Any], path: str, fmt: str) -> Any:
    """A number of the JSON at ``path`` (``df.total.bytes``, ``functions.0.size``) as the
    page shows it, in an element that names where it came from."""
    from markupsafe import Markup, escape

    value = _resolve(data, path)
    shown_as = _FORMATS[fmt](value)
    exact = "" if fmt == "count" or value is None else f' title="{escape(_count(value) if fmt == "size" else value)}"'
    return Markup(f'<span class="num" data-json="{escape(path)}" data-value="{escape(json.dumps(value))}"'
                  f'{exact}>{escape(shown_as)}</span>')


def _age(ts: float | None, data: dict[str, Any]) -> str:
    return age(ts, data["generated_at"])


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))
