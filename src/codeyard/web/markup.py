"""User text as HTML: Markdown (CommonMark, then sanitised) and highlighted source code.

Markdown may hold raw HTML (CommonMark allows it); nh3 then keeps only an allowlist of tags and
attributes, so no script, style, event handler or `javascript:` link survives. Pygments escapes
what it highlights and marks tokens with classes (its style sheet is a static file), so the
Content-Security-Policy needs no inline style.
"""

from __future__ import annotations

import functools

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup, escape
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

_MARKDOWN = MarkdownIt("commonmark", {"html": True}).enable("table").enable("strikethrough")
TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "td": {"align"}, "th": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
HIGHLIGHT_UP_TO = 256 * 1024  # bigger text is shown escaped, without highlighting (Pygments is slow)
_FORMATTER = HtmlFormatter(cssclass="highlight", linenos="table", lineanchors="L", anchorlinenos=True)
STYLE_SHEET = _FORMATTER.get_style_defs(".highlight")


def markdown(text: str | None) -> Markup:
    """TEXT rendered as CommonMark and sanitised."""
    if not text:
        return Markup("")
    html = _MARKDOWN.render(text)
    return Markup(nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                            link_rel="nofollow noopener noreferrer"))  # fmt: skip


KEPT_UP_TO = 64 * 1024


def markdown_kept(text: str | None) -> Markup:
    """`markdown`, kept for the last 512 texts of at most KEPT_UP_TO characters: comments are
    shown again on every view of their page, and rendering one took about 0.2 ms."""
    return markdown(text) if text is None or len(text) > KEPT_UP_TO else _kept_markdown(text)


@functools.lru_cache(maxsize=512)
def _kept_markdown(text: str) -> Markup:
    return markdown(text)


def code(text: str, filename: str) -> Markup:
    """TEXT highlighted for FILENAME's language, with line numbers that link to `#L<n>`."""
    if len(text) > HIGHLIGHT_UP_TO:
        return Markup('<pre class="plain">{}</pre>').format(escape(text))
    try:
        lexer = get_lexer_for_filename(filename, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    return Markup(highlight(text, lexer, _FORMATTER))


def is_binary(data: bytes) -> bool:
    """Git's rule: a NUL byte in the first 8,000 bytes."""
    return b"\0" in data[:8000]


def is_markdown(filename: str) -> bool:
    return filename.lower().endswith((".md", ".markdown", ".mdown", ".mkd"))
