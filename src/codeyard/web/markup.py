"""User text as HTML: Markdown (cmark-gfm, then sanitised) and highlighted source code, each bounded
in time whatever the text.

Markdown is parsed by cmark-gfm (C, linear time) with GitHub's table and strikethrough extensions;
it may hold raw HTML, and nh3 then keeps only an allowlist of tags and attributes, so no script,
style, event handler or `javascript:` link survives. nh3's HTML parser walks its stack of open
elements (and its list of open formatting elements) at each tag, so its work grows as the tags
times their nesting: that nesting is at most the Markdown's own (measured on cmark's output without
raw HTML, which is well formed) plus every `<` of the raw HTML. Beyond SANITISED_UP_TO such steps,
MARKDOWN_UP_TO characters or HTML_UP_TO characters of HTML, the text is shown as plain escaped
text (1 MB of `![[` took 12 s with markdown-it-py; 200,000 nested `<div>` would take nh3 minutes).

Pygments escapes what it highlights and marks tokens with classes (its style sheet is a static
file), so the Content-Security-Policy needs no inline style. Its lexers are regular expressions,
some of them quadratic (an unclosed `<!--` in HTML cost 50 s for 256 KiB): text is highlighted only
up to HIGHLIGHT_UP_TO characters in lines of at most LINE_UP_TO, and lexing stops after
HIGHLIGHT_SECONDS of the thread's CPU time; the text is then shown plain.
"""

from __future__ import annotations

import ctypes
import re
import sys
import time

import nh3
from cmarkgfm import _cmark
from markupsafe import Markup, escape
from pygments import format as format_tokens
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_for_filename
from pygments.lexers.special import TextLexer
from pygments.util import ClassNotFound

from .kept import Kept

TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "div", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "img": {"src", "alt", "title"}, "td": {"align"}, "th": {"align"}, "ol": {"start"}}
URL_SCHEMES = {"http", "https", "mailto"}
MARKDOWN_UP_TO = 512 * 1024  # characters of Markdown rendered; longer text is shown plain
HTML_UP_TO = 4 * 1024 * 1024  # characters of cmark's HTML sanitised (512 K of `>` make 13 M)
SANITISED_UP_TO = 10_000_000  # tags × nesting nh3 may walk (about 0.3 s at worst, measured)
HIGHLIGHT_UP_TO = 128 * 1024  # characters highlighted (100 KB of Python take 0.45 s); bigger text is plain
LINE_UP_TO = 2_000  # characters in a highlighted line (a single regex match is not interruptible)
HIGHLIGHT_SECONDS = 0.5  # CPU time a file's lexing may take
_FORMATTER = HtmlFormatter(cssclass="highlight", linenos="table", lineanchors="L", anchorlinenos=True)
STYLE_SHEET = _FORMATTER.get_style_defs(".highlight")


def plain(text: str) -> Markup:
    """TEXT shown as it is, escaped."""
    return Markup('<pre class="plain">{}</pre>').format(escape(text))


# cmark-gfm through cmarkgfm's compiled module. Its own wrapper frees neither the document nor the
# HTML (about 50 MB leaked per 1 MB rendered), so both are freed here: the document by
# cmark_node_free, the HTML (from cmark's default allocator, the C library's) by free.
_lib, _ffi = _cmark.lib, _cmark.ffi
_node_free = ctypes.CDLL(_cmark.__file__).cmark_node_free
_node_free.argtypes = [ctypes.c_void_p]
_free = ctypes.CDLL(None).free
_free.argtypes = [ctypes.c_void_p]
_lib.cmark_gfm_core_extensions_ensure_registered()
_EXTENSIONS = [_lib.cmark_find_syntax_extension(name) for name in (b"table", b"strikethrough")]
_OMITTED = "<!-- raw HTML omitted -->"  # what cmark writes for raw HTML unless told it is safe


def _address(pointer) -> int:
    return int(_ffi.cast("uintptr_t", pointer))


def cmark_html(text: str, raw_html: bool = False) -> str:
    """TEXT as GitHub Flavored Markdown's HTML (tables, strikethrough); raw HTML passed through
    when RAW_HTML, else replaced by _OMITTED (and `javascript:`-like links emptied)."""
    data = text.encode("utf-8", "replace")
    options = _lib.CMARK_OPT_UNSAFE if raw_html else _lib.CMARK_OPT_DEFAULT
    parser = _lib.cmark_parser_new(options)
    try:
        for extension in _EXTENSIONS:
            _lib.cmark_parser_attach_syntax_extension(parser, extension)
        _lib.cmark_parser_feed(parser, data, len(data))
        document = _lib.cmark_parser_finish(parser)
        try:
            html = _lib.cmark_render_html(document, options, _lib.cmark_parser_get_syntax_extensions(parser))
            try:
                return _ffi.string(html).decode("utf-8", "replace")
            finally:
                _free(_address(html))
        finally:
            _node_free(_address(document))
    finally:
        _lib.cmark_parser_free(parser)


_TAG = re.compile(r"<(/?)[a-zA-Z][^>]*?(/?)>")


def nesting(html: str) -> int:
    """The deepest nesting of elements in well-formed HTML (cmark's without raw HTML)."""
    depth = deepest = 0
    for tag in _TAG.finditer(html):
        if tag[1]:
            depth -= 1
        elif not tag[2]:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def markdown(text: str | None) -> Markup:
    """TEXT rendered as GitHub Flavored Markdown and sanitised; plain when it would cost too much."""
    if not text:
        return Markup("")
    if len(text) > MARKDOWN_UP_TO:
        return plain(text)
    safe = html = cmark_html(text)
    if len(safe) > HTML_UP_TO:
        return plain(text)
    raw_tags = 0
    if _OMITTED in safe:
        html = cmark_html(text, raw_html=True)
        raw_tags = html.count("<") - safe.count("<") + safe.count(_OMITTED)
    tags = html.count("<")
    if tags * (tags + raw_tags) > SANITISED_UP_TO and tags * (nesting(safe) + raw_tags) > SANITISED_UP_TO:
        return plain(text)
    return Markup(nh3.clean(html, tags=TAGS, attributes=ATTRIBUTES, url_schemes=URL_SCHEMES,
                            link_rel="nofollow noopener noreferrer"))  # fmt: skip


_comments = Kept(512, 32 * 1024 * 1024)


def markdown_kept(text: str | None) -> Markup:
    """`markdown`, kept by text (the last 512, at most 32 MiB of text and HTML): comments are shown
    again on every view of their page, and a long one takes a while."""
    if not text:
        return markdown(text)
    if (kept := _comments.get(text)) is None:
        kept = markdown(text)
        _comments.put(text, kept, len(text) + len(kept))
    return kept


class _OverTime(BaseException):
    """Lexing took longer than HIGHLIGHT_SECONDS (a BaseException: no lexer's `except Exception`
    may swallow it)."""


def _tokens(lexer, text: str) -> list | None:
    """LEXER's tokens of TEXT, or None when they took over HIGHLIGHT_SECONDS of CPU. The clock is
    read at every Python call in this thread (sys.settrace): delegating lexers lex all of a text
    before their first token, and `using()` callbacks a whole region."""
    deadline = time.thread_time() + HIGHLIGHT_SECONDS

    def check(_frame, _event, _arg):
        if time.thread_time() > deadline:
            raise _OverTime
        return None

    previous = sys.gettrace()
    sys.settrace(check)
    try:
        return list(lexer.get_tokens(text))
    except _OverTime:
        return None
    finally:
        sys.settrace(previous)


def code(text: str, filename: str) -> Markup:
    """TEXT highlighted for FILENAME's language, with line numbers that link to `#L<n>`; plain when
    it is too long, has too long a line or takes too long."""
    if len(text) > HIGHLIGHT_UP_TO or max(map(len, text.split("\n"))) > LINE_UP_TO:
        return plain(text)
    try:
        lexer = get_lexer_for_filename(filename, stripnl=False)
    except ClassNotFound:
        lexer = TextLexer(stripnl=False)
    tokens = _tokens(lexer, text)
    return plain(text) if tokens is None else Markup(format_tokens(tokens, _FORMATTER))


def is_binary(data: bytes) -> bool:
    """Git's rule: a NUL byte in the first 8,000 bytes."""
    return b"\0" in data[:8000]


def is_markdown(filename: str) -> bool:
    return filename.lower().endswith((".md", ".markdown", ".mdown", ".mkd"))
