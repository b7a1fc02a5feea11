"""The built site, tested as a reader sees it: every page in headless Chromium, with no network.

The site (``_build/html``, or ``$DPBOOK_SITE_DIR``) is served on 127.0.0.1 and every page of the book
is loaded in Debian's Chromium through its chromedriver, at 1280 px and then at 400 px wide.  Once
MathJax has typeset the page, each page is checked for (each kind of problem is named as below, and
reported with its page and a snippet):

``markup``
    the visible text outside math and code holds no leftover markup: no ``$`` (math that was not
    parsed), no ``{cite:p}``/``{prf:ref}``/``{numref}``-style roles, no directive fences (```````,
    ``:::``) or option lines (``:label:``), no TeX commands (``\\varphi``, ``\\(``, ``\\begin``),
    no pipe-table rows (``| a | b |``, ``|---|``), no unresolved ``??`` references;
``equation-1280`` / ``equation-400``
    every display equation fits the text column at 1280 px (its rendered width is not over its
    container's), and at 400 px an equation wider than the column scrolls (``overflow-x: auto`` on
    its ``mjx-container``) instead of being cut; solutions and dropdowns are opened for this;
``overflow-400``
    at 400 px nothing else makes the text column scroll sideways;
``alt``
    every ``<img>`` (figures and widget images) has alt text saying what it shows: not empty, not
    a file name like ``1f2e3d.png``, not a generic word;
``requests``
    every request succeeds (no HTTP status >= 400, no failed load; from the DevTools performance
    log) and none leaves localhost (the browser resolves no other host);
``javascript``
    no JavaScript error (console level SEVERE);
``mathjax`` / ``images`` / ``widgets``
    MathJax finished, every image loaded, every widget snapshot is rendered with its figure;
``axe``
    axe-core (fetched by the build into ``_offline/axe/``, injected by this test only) finds no
    violation of impact "serious" or "critical";
``navigation-1280`` / ``navigation-400``
    the theme's buttons work, clicked and from the keyboard (Enter, Space): at 1280 px ☰ collapses
    the table of contents and restores it; at 400 px ☰ opens it and the page-contents button opens
    the page's outline;
``figure-text-400``
    at 400 px every figure's smallest text is at least :data:`MIN_TEXT_PX` CSS px: the height the
    figure recorded for its smallest text (``dpbook_book.plotting.png_bytes``), scaled by the width
    the page shows it at over its natural width; a figure of a chapter that records none is flagged;
``cut-400``
    at 400 px no inline code or math is cut off by a box that clips it, and no cell of a printed
    table wraps (a table scrolls sideways instead);
``first-load``
    a chapter's first visit loads at most :data:`FIRST_LOAD_BUDGET` bytes beyond the shared theme,
    MathJax and widget scripts (``_static/``, ``_offline/``, the search index): the HTML and what it
    shows before the reader touches a control (each page's bytes are saved).  Each page is loaded for
    the first time then; only the shared assets can come from the browser's cache, and they are not
    counted.

Each check is shown to fail on a deliberately broken page (``test_check_flags_broken_page``), and to
pass on a clean one.  Screenshots (1280 px and 400 px) are saved under ``_build/screenshots/`` with
each page's problems as JSON beside them.  Further tests open every chapter in the JupyterLite lab
(its MyST blocks render, the install cell and the wheel are there), and check the status page's
execution times.

Without a built site, or without Chromium, the tests skip — unless ``DPBOOK_SITE_TEST=required``
(set by ``.ci/run`` after the build), in which case they fail.
"""

from __future__ import annotations

import base64
import functools
import glob
import http.server
import json
import os
import re
import shutil
import tempfile
import threading
import time
import zipfile
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest

# one worker for the module (its fixtures are built once) when the slow stage hands out tests one by one
# (.ci/run: --dist loadgroup)
pytestmark = pytest.mark.xdist_group("site")

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("DPBOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = SITE.parent / "screenshots"
REQUIRED = os.environ.get("DPBOOK_SITE_TEST", "").lower() == "required"
#: folders of the site that hold assets or other apps, not pages of the book
NOT_PAGES = {
    "_static",
    "_offline",
    "_sources",
    "_images",
    "_views",
    "lite",
    "_downloads",
}
#: no chapter may take longer than this (a chapter that hangs or loops; the book's budget of issue 26, 3 minutes
#: on two cores and 20 s a chapter, is reported by tools/execute_book.py in CI: seconds of a shared machine)
PER_CHAPTER_BUDGET = 60.0
PAGE_TIMEOUT = 60.0
#: how long a page may take to settle (MathJax typeset, widgets rendered)
SETTLE_TIMEOUT = 20.0
#: how long axe-core may take over one page
AXE_TIMEOUT = 300.0
WIDE, NARROW = 1280, 400
AXE_IMPACTS = {"serious", "critical"}
#: the smallest text a figure may show at 400 px (CSS px), and what a chapter may load on a first visit
#: beyond the assets every page shares (bytes)
MIN_TEXT_PX = 9.0
FIRST_LOAD_BUDGET = 400_000
#: URL path prefixes of the assets every page shares (the theme, MathJax, the widget manager, search)
SHARED_ASSETS = (
    "/_static/",
    "/_offline/",
    "/_sphinx_design_static/",
    "/searchindex.js",
    "/favicon.ico",
)
#: the PNG text chunk a figure's smallest text height is recorded in (``dpbook_book.plotting.TEXT_SIZE_KEY``)
TEXT_SIZE_KEY = "dpbook:smallest-text-px"
#: the install cell every chapter starts with (see tests/test_launch.py), and the lite site's own
LITE_INSTALL_MARK = "%pip install -q dpbook"

#: leftover markup in the visible text outside math and code: (what it is, pattern)
MARKUP = [
    ("a $ (math that was not parsed)", r"\$"),
    (
        "a MyST role",
        r"\{(?:[a-z][\w-]*:[\w:-]+|ref|numref|eq|doc|term|download|abbr|index|math|sub|sup"
        r"|glue|cite|exercise|solution)\}",
    ),
    ("a directive fence", r"`{3,}|:{3,}"),
    (
        "a directive option line",
        r"(?<![\w:]):(?:label|class|name|nonumber|numbered|enumerated|dropdown|"
        r"open|width|height|align|alt|figwidth|figclass|caption|tags):(?=\s|$)",
    ),
    ("a TeX command", r"\\(?:[A-Za-z]+|[()\[\]{}])"),
    ("a pipe-table row", r"\|\s*:?-{3,}:?\s*\||\|[^|\n]{1,80}\|[^|\n]{1,80}\|"),
    ("an unresolved reference ??", r"\?\?"),
]
_MARKUP_RE = [(what, re.compile(rx)) for what, rx in MARKUP]


def _unavailable(reason):
    if REQUIRED:
        pytest.fail(f"{reason} (DPBOOK_SITE_TEST=required)")
    pytest.skip(reason)


def _pages():
    if not (SITE / "index.html").is_file():
        return []
    return sorted(
        p.relative_to(SITE).as_posix()
        for p in SITE.rglob("*.html")
        if not NOT_PAGES.intersection(p.relative_to(SITE).parts[:-1])
    )


PAGES = _pages()


def _book_notebooks():
    """The notebooks the site was built from (jupyter-book copies each source to ``_sources/``)."""
    if not (SITE / "_sources").is_dir():
        return []
    return sorted(
        p.relative_to(SITE / "_sources").as_posix()
        for p in (SITE / "_sources").rglob("*.ipynb")
    )


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        _unavailable(f"no built site at {SITE}: run `jupyter-book build .` first")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def _serve(directory):
    handler = functools.partial(_QuietHandler, directory=str(directory))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd, f"http://127.0.0.1:{httpd.server_address[1]}"


@pytest.fixture(scope="module")
def server(site):
    httpd, url = _serve(site)
    yield url
    httpd.shutdown()
    httpd.server_close()


def _chromium():
    for candidate in (
        os.environ.get("DPBOOK_CHROMIUM"),
        "/usr/lib/chromium/chromium",
        shutil.which("chromium"),
        shutil.which("chromium-browser"),
    ):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _unavailable("selenium is not installed")
    binary, driver_path = _chromium(), shutil.which("chromedriver")
    if binary is None or driver_path is None:
        _unavailable("Debian's chromium and chromium-driver are not installed")
    profile = tempfile.mkdtemp(prefix="dpbook-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = binary
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--window-size={WIDE},1000",
        f"--user-data-dir={profile}",
        "--hide-scrollbars",
        # resolve no host but this one: the site must work with no network at all
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(
        options=opts, service=Service(executable_path=driver_path)
    )
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    # a renderer busy with a long page (axe-core on the API reference) answers late, not never
    driver.command_executor.client_config.timeout = 600
    driver.get("about:blank")
    time.sleep(0.5)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _find_axe():
    """axe-core's ``axe.min.js``, as fetched by the build (``_offline/axe/`` of the site or its cache)."""
    candidates = [
        SITE / "_offline" / "axe" / "axe.min.js",
        *sorted(
            Path(p)
            for p in glob.glob(
                str(
                    SITE.parent
                    / ".offline-cache"
                    / "*"
                    / "site"
                    / "_offline"
                    / "axe"
                    / "axe.min.js"
                )
            )
        ),
    ]
    return next((p for p in candidates if p.is_file()), None)


@pytest.fixture(scope="module")
def axe_source():
    path = _find_axe()
    if path is None:
        _unavailable(
            "axe-core is not fetched: build the site (the build fetches it into _offline/axe/)"
        )
    return path.read_text(encoding="utf-8")


# Waits until the page is complete, MathJax (if the page loads it) has typeset, and every widget
# snapshot has been rendered with its images loaded; then reports what the checks need.
_SETTLE_JS = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now(), limit = arguments[0] * 1000;
const views = () => Array.from(document.querySelectorAll(
  'script[type="application/vnd.jupyter.widget-view+json"]'));
const rendered = (s) => {
  const el = s.previousElementSibling;
  if (!el || !el.classList.contains('widget-subarea')) return false;
  const imgs = el.querySelectorAll('img');
  return imgs.length > 0 && Array.from(imgs).every(i => i.complete && i.naturalWidth > 0);
};
document.querySelectorAll('img[loading="lazy"]').forEach(i => { i.loading = 'eager'; });
let mathjax = 'absent';
function report() {
  done({
    mathjax: mathjax,
    images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
      alt: i.getAttribute('alt'), ok: i.complete && i.naturalWidth > 0})),
    views: views().map((s, k) => ({index: k, rendered: rendered(s)})),
    title: document.title,
  });
}
function poll() {
  const expired = Date.now() - t0 > limit;
  if (document.readyState !== 'complete' && !expired) return setTimeout(poll, 50);
  const hasMathJax = !!document.querySelector('script[src*="mathjax/"]');
  if (hasMathJax && mathjax === 'absent') {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      mathjax = 'pending';
      MathJax.startup.promise.then(() => { mathjax = 'typeset'; },
                                   (e) => { mathjax = 'error: ' + e; });
    } else if (!expired) {
      return setTimeout(poll, 50);
    }
  }
  const imagesDone = Array.from(document.images).every(i => i.complete);
  if (!expired && (mathjax === 'pending' || !imagesDone || !views().every(rendered))) {
    return setTimeout(poll, 100);
  }
  report();
}
poll();
"""

# The visible text outside math and code, one line per block element (so a line of leftover
# markup starts a line), after opening every collapsed solution and dropdown.
_TEXT_JS = r"""
document.querySelectorAll('details').forEach(d => { d.open = true; });
document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
const skip = 'pre, code, kbd, samp, script, style, noscript, template, textarea, mjx-container, .MathJax, '
  + '.highlight, .headerlink, .widget-subarea, .sig';  // .sig: an API signature is code
const block = 'p, li, td, th, dt, dd, h1, h2, h3, h4, h5, h6, div, section, caption, figcaption, '
  + 'summary, blockquote, aside, nav, header, footer, article, main, body';
const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
const out = [];
let last = null;
for (let n = walker.nextNode(); n; n = walker.nextNode()) {
  const el = n.parentElement;
  if (!el || el.closest(skip)) continue;
  const b = el.closest(block);
  if (b !== last) { out.push('\n'); last = b; }
  out.push(n.textContent);
}
return out.join('');
"""

# Every display equation: its width against its container's, and whether it scrolls.
_EQUATIONS_JS = r"""
const items = (c) => {
  try { const m = MathJax.startup.document.getMathItemsWithin(c); return m.length ? m[0].math : ''; }
  catch (e) { return ''; }
};
return Array.from(document.querySelectorAll('mjx-container[display="true"]')).map((c, k) => {
  if (c.getClientRects().length === 0) return null;
  const parent = c.parentElement;
  const avail = Math.min(c.clientWidth, parent ? parent.clientWidth : c.clientWidth);
  const inner = c.firstElementChild;
  const width = Math.max(c.scrollWidth, inner ? Math.ceil(inner.getBoundingClientRect().width) : 0);
  return {index: k, tex: (items(c) || c.textContent).trim().slice(0, 120), width: width, avail: avail,
          overflow: getComputedStyle(c).overflowX};
}).filter(e => e !== null);
"""

# At 400 px: the outermost elements that stick out of the text column without a scrolling box
# of their own (the column itself scrolls sideways then).
_OVERFLOW_JS = r"""
const art = document.querySelector('.bd-article') || document.querySelector('main') || document.body;
const ar = art.getBoundingClientRect();
const scroller = (el) => ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
const out = [], reported = [];
for (const el of art.querySelectorAll('*')) {
  if (el.getClientRects().length === 0 || el.closest('mjx-container')) continue;
  if (reported.some(r => r.contains(el))) continue;
  let s = el.parentElement, inside = false;
  while (s && s !== art) { if (scroller(s)) { inside = true; break; } s = s.parentElement; }
  if (inside) continue;
  const r = el.getBoundingClientRect();
  if (r.right > ar.right + 2 && r.width > 0) {
    reported.push(el);
    out.push('<' + el.tagName.toLowerCase() + (el.className && typeof el.className === 'string'
      ? ' class="' + el.className + '"' : '') + '> ' + Math.round(r.right - ar.left) + ' px wide in a '
      + Math.round(ar.width) + ' px column: ' + (el.textContent || '').trim().slice(0, 80));
    if (out.length >= 5) break;
  }
}
return out;
"""

# axe-core's rules whose every check is at most of moderate impact can report nothing this test counts
# (AXE_IMPACTS), so they are not run (about a tenth of axe's time on a chapter: `region` alone is one of its
# costliest rules); the list is read from the pinned axe-core itself, not kept here
_AXE_JS = r"""
const done = arguments[arguments.length - 1];
const rank = {minor: 0, moderate: 1, serious: 2, critical: 3};
const off = {};
for (const r of axe._audit.rules) {
  const impacts = [...r.any, ...r.all, ...r.none]
    .map(c => axe._audit.checks[typeof c === 'string' ? c : c.id])
    .map(c => (c && c.impact) || 'critical');
  if (impacts.length && Math.max(...impacts.map(i => rank[i] ?? 3)) <= 1) off[r.id] = {enabled: false};
}
const report = (r) => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
  nodes: v.nodes.map(n => ({target: n.target.join(' '), html: n.html.slice(0, 160),
                            impact: n.impact}))}));
// color-contrast leaves out the code blocks' tokens (_CODE_CONTRAST_JS checks each of their colours once)
(async () => {
  const rest = await axe.run(document, {resultTypes: ['violations'],
                                        rules: {...off, 'color-contrast': {enabled: false}}});
  const contrast = await axe.run({include: [['html']], exclude: [['.highlight']]},
                                 {resultTypes: ['violations'], runOnly: {type: 'rule', values: ['color-contrast']}});
  done([...report(rest), ...report(contrast)]);
})().catch((e) => done({error: String(e)}));
"""

# The colours of the code blocks' tokens against their block's background (WCAG's contrast ratio, at least
# 4.5:1 for text of normal size), each distinct pair of colours once.  axe-core's color-contrast rule does
# not visit the code blocks: it weighs each of their thousands of token spans alone (half of axe's time on a
# chapter, for the few colours of one highlighting style).
_CODE_CONTRAST_JS = r"""
const parse = (c) => { const m = c.match(/rgba?\(([^)]+)\)/); if (!m) return null;
  const v = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number); return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1]; };
const over = (top, bottom) => [0, 1, 2].map(i => top[i] * top[3] + bottom[i] * (1 - top[3])).concat([1]);
const background = (el) => { const layers = [];
  for (let a = el; a; a = a.parentElement) { const c = parse(getComputedStyle(a).backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; } }
  return layers.reverse().reduce((b, t) => over(t, b), [255, 255, 255, 1]); };
const lum = (c) => { const f = (x) => { x /= 255; return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4; };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
const seen = new Map();
for (const el of document.querySelectorAll('.highlight span, .highlight pre')) {
  const own = Array.from(el.childNodes).some(n => n.nodeType === 3 && n.textContent.trim());
  if (!own || el.getClientRects().length === 0) continue;
  const bg = background(el), fg = over(parse(getComputedStyle(el).color), bg);
  const key = fg.join() + '|' + bg.join();
  if (seen.has(key)) continue;
  const [hi, lo] = [lum(fg), lum(bg)].sort((a, b) => b - a);
  seen.set(key, {ratio: (hi + 0.05) / (lo + 0.05), cls: el.className || el.tagName.toLowerCase(),
                 text: el.textContent.trim().slice(0, 40), fg: fg.slice(0, 3).map(Math.round).join(),
                 bg: bg.slice(0, 3).map(Math.round).join()});
}
return Array.from(seen.values());
"""


# At 400 px: every figure shown in the article, with its natural and rendered widths.
_FIGURES_JS = r"""
const art = document.querySelector('.bd-article') || document.body;
return Array.from(art.querySelectorAll('img')).filter(i => i.getClientRects().length > 0 && i.naturalWidth > 0)
  .map(i => ({src: i.currentSrc || i.src, natural: i.naturalWidth,
              rendered: i.getBoundingClientRect().width, alt: (i.alt || '').slice(0, 80),
              output: !!i.closest('.cell_output, .widget-subarea, .output')}));
"""

# At 400 px: inline code and math cut off by a box that clips it, and printed-table cells that wrap.
_CUT_JS = r"""
const art = document.querySelector('.bd-article') || document.body;
const out = [];
const clips = (el) => ['hidden', 'clip'].includes(getComputedStyle(el).overflowX);
const scrolls = (el) => ['auto', 'scroll'].includes(getComputedStyle(el).overflowX);
for (const el of art.querySelectorAll('code, mjx-container:not([display="true"])')) {
  if (el.closest('pre') || el.getClientRects().length === 0) continue;
  const r = el.getBoundingClientRect();
  for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
    if (scrolls(a)) break;
    if (clips(a) || a === art) {
      const ar = a.getBoundingClientRect();
      if (r.right > ar.right + 1 || r.left < ar.left - 1) {
        out.push('<' + el.tagName.toLowerCase() + '> cut at ' + Math.round(ar.right - r.left) + ' of '
                 + Math.round(r.width) + ' px: ' + (el.textContent || '').trim().slice(0, 80));
      }
      break;
    }
  }
  if (out.length >= 8) break;
}
for (const cell of art.querySelectorAll('.cell_output td, .cell_output th, .output td, .output th')) {
  if (cell.getClientRects().length === 0 || !cell.textContent.trim()) continue;
  // the lines of the cell's own text (a formula's sub- and superscripts are not lines)
  const line = parseFloat(getComputedStyle(cell).lineHeight) || 16;
  const tops = [];
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest('mjx-container')) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    for (const q of range.getClientRects()) if (q.width > 0) tops.push(q.top);
  }
  tops.sort((a, b) => a - b);
  const lines = 1 + tops.filter((t, k, a) => k > 0 && t - a[k - 1] > line * 0.6).length;
  if (lines > 1) {
    out.push('a printed table cell wraps onto ' + lines + ' lines: ' + cell.textContent.trim().slice(0, 60));
    break;
  }
}
return out;
"""

# Is an element on screen (and not a collapsed or hidden drawer)?
_SHOWN_JS = r"""
const el = document.querySelector(arguments[0]);
if (!el) return 'absent';
const r = el.getBoundingClientRect(), cs = getComputedStyle(el);
return (r.width > 50 && r.height > 50 && r.right > 10 && r.left < innerWidth - 10
        && cs.visibility !== 'hidden' && cs.display !== 'none' && Number(cs.opacity) > 0.1) ? 'shown' : 'hidden';
"""
#: the table of contents and the page's outline (sphinx-book-theme's sidebars)
PRIMARY, SECONDARY = ".bd-sidebar-primary", ".bd-sidebar-secondary"


def _visible_button(driver, selector):
    for button in driver.find_elements("css selector", selector):
        if button.is_displayed():
            return button
    return None


def _press(driver, selector, how):
    """Activate the visible button ``selector``: a click, or the key ``how`` on it once focused."""
    from selenium.webdriver.common.keys import Keys

    button = _visible_button(driver, selector)
    if button is None:
        return False
    if how == "click":
        button.click()
    else:
        driver.execute_script("arguments[0].focus();", button)
        button.send_keys({"Enter": Keys.ENTER, "Space": Keys.SPACE}[how])
    return True


def _shown(driver, selector):
    return driver.execute_script(_SHOWN_JS, selector)


def _becomes(driver, selector, state, timeout=1.5):
    """Whether the drawer ``selector`` reaches ``state`` ('shown' or 'hidden') within ``timeout`` seconds
    of a press: the drawers slide (a CSS transition), so the state is polled rather than read once after
    a fixed wait; a drawer that never gets there costs the whole timeout."""
    end = time.perf_counter() + timeout
    while _shown(driver, selector) != state:
        if time.perf_counter() > end:
            return False
        time.sleep(0.05)
    return True


#: pages whose navigation is also driven from the keyboard (Enter and Space on each button); every page is
#: clicked.  The buttons are the theme's, the same on every page: the keyboard is tried on the landing page,
#: the intro and one chapter so that the site test stays within CI's time (the API reference, the longest
#: page, is clicked only: its load is what makes a keyboard pass there cost 15 s).
KEYBOARD_PAGES = (
    "index.html",
    "book/intro.html",
    "book/part3/ch10_normalization_leaks.html",
)


def navigation_problems(driver, url, *, keyboard=True, loaded=False):
    """Click the theme's buttons (and press Enter/Space on them) at 1280 px and 400 px: ``{kind: [message]}``.

    At 1280 px ☰ (``.primary-toggle``) must hide the table of contents and a second press show it
    again (by click, Enter and Space in turn, on one load); at 400 px ☰ must open the table of
    contents and the page-contents button (``.secondary-toggle``) the page's outline, on a page that
    has one (a fresh load for each press).  Without ``keyboard`` each button is clicked once, and the
    page-contents button is only required to be shown (it is pressed on the keyboard pages).
    ``loaded``: ``url`` is the page the driver shows now, at 1280 px and not yet navigated (the page
    checks have just read it), so the presses at 1280 px use it instead of a fresh load (one load fewer
    a page; the presses at 400 px always start from a fresh load, as a phone reader's would).
    """
    problems = {}

    def load(width):
        driver.set_window_size(width, 900)
        driver.get(url)
        driver.execute_async_script(
            "const d = arguments[arguments.length - 1];"
            "(function p() { if (document.readyState === 'complete') setTimeout(d, 300); else setTimeout(p, 50); })();"
        )

    def flag(width, message):
        problems.setdefault(f"navigation-{width}", []).append(message)

    if loaded and driver.current_url.split("#")[0] == url.split("#")[0]:
        driver.set_window_size(WIDE, 900)
    else:
        load(WIDE)
    if _shown(driver, PRIMARY) != "shown":
        flag(WIDE, "the table of contents is not shown at first")
    else:
        for how in ("click", "Enter", "Space") if keyboard else ("click",):
            if not _press(driver, ".primary-toggle", how):
                flag(WIDE, "no visible ☰ button")
                break
            if not _becomes(driver, PRIMARY, "hidden"):
                flag(WIDE, f"☰ ({how}) does not collapse the table of contents")
                break
            _press(driver, ".primary-toggle", how)
            if not _becomes(driver, PRIMARY, "shown"):
                flag(WIDE, f"☰ ({how}) again does not restore it")
                break
    has_outline = outline_button = None
    for selector, drawer, what, ways in (
        (".primary-toggle", PRIMARY, "☰", ("click", "Enter", "Space")),
        (".secondary-toggle", SECONDARY, "the contents button", ("click", "Space")),
    ):
        if selector == ".secondary-toggle" and not keyboard:
            # the outline's button is the theme's, pressed (click and Space) on the keyboard pages; on
            # the others it must be shown where the page has an outline (one load fewer a page)
            if has_outline and not outline_button:
                flag(NARROW, f"no visible {what} ({selector})")
            continue
        for how in ways if keyboard else ways[:1]:
            load(NARROW)
            if has_outline is None:
                has_outline = bool(
                    driver.find_elements("css selector", f"{SECONDARY} nav a")
                )
                outline_button = (
                    _visible_button(driver, ".secondary-toggle") is not None
                )
            if _shown(driver, drawer) == "shown":
                flag(NARROW, f"{drawer} is open before {what} is pressed")
                break
            if not _press(driver, selector, how):
                if selector == ".primary-toggle" or has_outline:
                    flag(NARROW, f"no visible {what} ({selector})")
                break
            if not _becomes(driver, drawer, "shown"):
                flag(NARROW, f"{what} ({how}) opens nothing ({drawer})")
    driver.set_window_size(WIDE, 1000)
    return problems


def png_text_size(data: bytes):
    """The smallest text height (px of the image) a figure recorded in its PNG, or ``None``."""
    import io

    from PIL import Image

    try:
        with Image.open(io.BytesIO(data)) as image:
            value = getattr(image, "text", {}).get(TEXT_SIZE_KEY)
    except Exception:  # not an image PIL reads (an SVG icon): records nothing
        return None
    return float(value) if value else None


def _image_bytes(src, origin, root):
    """The bytes of the image at ``src`` (a ``data:`` URI, or a URL of the site served from ``root``)."""
    if src.startswith("data:"):
        header, _, data = src.partition(",")
        return base64.b64decode(data) if ";base64" in header else None
    parts = urlsplit(src)
    if f"{parts.scheme}://{parts.netloc}" != origin:
        return None
    path = Path(root) / parts.path.lstrip("/")
    return path.read_bytes() if path.is_file() else None


def figure_text_problems(figures, origin, root, chapter=True):
    """``figures`` (from :data:`_FIGURES_JS`, at 400 px) whose smallest text is under :data:`MIN_TEXT_PX`.

    Returns ``(problems, smallest)``: the messages, and the smallest text (CSS px) of the page's figures.
    """
    problems, smallest = [], None
    for fig in figures:
        data = _image_bytes(fig["src"], origin, root)
        px = png_text_size(data) if data else None
        if px is None:
            if chapter and fig["output"]:
                problems.append(
                    f"a figure records no text size ({TEXT_SIZE_KEY}): {fig['alt']!r}"
                )
            continue
        css = px * fig["rendered"] / fig["natural"]
        smallest = css if smallest is None else min(smallest, css)
        if css < MIN_TEXT_PX - 0.05:
            problems.append(
                f"smallest text {css:.1f} CSS px (a {fig['natural']} px figure shown "
                f"{fig['rendered']:.0f} px wide): {fig['alt']!r}"
            )
    return problems, smallest


def first_load_bytes(perf_log, origin):
    """``(page bytes, shared bytes)`` the browser transferred for the page load in ``perf_log``."""
    urls, sizes = {}, {}
    for entry in perf_log:
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif method == "Network.loadingFinished":
            sizes[params["requestId"]] = params.get("encodedDataLength", 0)
    page = shared = 0
    for rid, size in sizes.items():
        url = urls.get(rid, "")
        if not url.startswith(origin + "/"):
            continue
        if urlsplit(url).path.startswith(SHARED_ASSETS):
            shared += size
        else:
            page += size
    return page, shared


def _snippet(text, i, j, width=60):
    return " ".join(text[max(0, i - width) : j + width].split())


def markup_problems(text):
    """Leftover markup in the visible ``text`` outside math and code: ``[what: snippet]``."""
    out = []
    for what, rx in _MARKUP_RE:
        for m in rx.finditer(text):
            out.append(f"{what} {m.group(0)!r}: …{_snippet(text, m.start(), m.end())}…")
    return out


def alt_problem(alt, src):
    """Why the alt text ``alt`` of the image at ``src`` says nothing (``None`` when it does): the build's
    own check (``_ext/dpbook_site/checks.py``), read off the rendered page, where an image may also have
    no alt attribute at all."""
    if alt is None:
        return "no alt attribute"
    return _site_ext().meaningless_alt(alt, urlsplit(src).path)


@functools.cache
def _site_ext():
    """The site's Sphinx extension (``_ext/dpbook_site``), whose checks the build runs on every page."""
    import importlib
    import sys

    sys.path.insert(0, str(ROOT / "_ext"))
    try:
        return importlib.import_module("dpbook_site")
    finally:
        sys.path.remove(str(ROOT / "_ext"))


def _network(perf_log, origin):
    """Requests off ``origin``, and failed requests (status >= 400 or load failure)."""
    urls, remote, failed = {}, set(), []
    for entry in perf_log:
        message = json.loads(entry["message"])["message"]
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            urls[params["requestId"]] = url
            scheme = urlsplit(url).scheme
            if not (
                url.startswith(origin + "/") or scheme in {"data", "blob", "about"}
            ):
                remote.add(url)
        elif (
            method == "Network.responseReceived" and params["response"]["status"] >= 400
        ):
            failed.append(
                f"HTTP {params['response']['status']} {params['response']['url']}"
            )
        elif method == "Network.loadingFailed" and not (
            params.get("canceled") and params.get("errorText") == "net::ERR_ABORTED"
        ):
            failed.append(
                f"{params.get('errorText')} {urls.get(params['requestId'], params['requestId'])}"
            )
    return sorted(remote), sorted(set(failed))


def _settle_frames(driver):
    driver.execute_async_script(
        "const d = arguments[arguments.length - 1];"
        "requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(d, 50)));"
    )


def inspect_page(
    driver, url, axe_source=None, static_html=None, shots=None, root=None, chapter=False
):
    """Load ``url`` at 1280 px, then at 400 px, and return its problems as ``{kind: [message]}``.

    ``static_html`` (the page's HTML source) tells how many widget snapshots it holds; ``shots``
    is the stem of the screenshots to save (none without it); ``root`` is the folder the site is
    served from (for the figures' recorded text sizes); a ``chapter`` has a first-load budget and its
    figures must record their text size.
    """
    driver.set_window_size(WIDE, 1000)
    driver.get_log("performance")
    driver.get_log("browser")
    t0 = time.perf_counter()
    driver.get(url)
    state = driver.execute_async_script(_SETTLE_JS, SETTLE_TIMEOUT)
    t_settle = time.perf_counter()
    problems = {}

    def add(kind, items):
        if items:
            problems.setdefault(kind, []).extend(items)

    if shots is not None:
        driver.save_screenshot(f"{shots}.png")
        for k, widget in enumerate(
            driver.find_elements("css selector", ".widget-subarea")
        ):
            widget.screenshot(f"{shots}__widget{k}.png")
    if state["mathjax"] not in {"absent", "typeset"}:
        add("mathjax", [f"MathJax {state['mathjax']}"])
    add(
        "images",
        [
            f"did not load: {img['src'][:120]}"
            for img in state["images"]
            if not img["ok"]
        ],
    )
    for img in state["images"]:
        why = alt_problem(img["alt"], img["src"])
        if why:
            add("alt", [f"{why}: {img['src'][:120]}"])
    if static_html is not None:
        n_views = static_html.count('type="application/vnd.jupyter.widget-view+json"')
        unrendered = [v["index"] for v in state["views"] if not v["rendered"]]
        if unrendered or len(state["views"]) != n_views:
            add(
                "widgets",
                [
                    f"widget snapshots not rendered with their figure: #{unrendered} of {n_views}"
                ],
            )

    add("markup", markup_problems(driver.execute_script(_TEXT_JS)))
    _settle_frames(driver)
    for eq in driver.execute_script(_EQUATIONS_JS):
        if eq["width"] > eq["avail"] + 1:
            add(
                f"equation-{WIDE}",
                [
                    f"display equation #{eq['index']} is {eq['width']} px wide in a "
                    f"{eq['avail']} px column: {eq['tex']}"
                ],
            )

    driver.set_window_size(NARROW, 900)
    _settle_frames(driver)
    for eq in driver.execute_script(_EQUATIONS_JS):
        if eq["width"] > eq["avail"] + 1 and eq["overflow"] not in {"auto", "scroll"}:
            add(
                f"equation-{NARROW}",
                [
                    f"display equation #{eq['index']} ({eq['width']} px) is cut in a "
                    f"{eq['avail']} px column (overflow-x: {eq['overflow']}): {eq['tex']}"
                ],
            )
    add(f"overflow-{NARROW}", driver.execute_script(_OVERFLOW_JS))
    add(f"cut-{NARROW}", driver.execute_script(_CUT_JS))
    origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
    if root is not None:
        found, smallest = figure_text_problems(
            driver.execute_script(_FIGURES_JS), origin, root, chapter
        )
        add(f"figure-text-{NARROW}", found)
        problems["_smallest_figure_text_px"] = (
            None if smallest is None else round(smallest, 2)
        )
    if shots is not None:
        driver.execute_script(
            "document.querySelectorAll('details').forEach(d => { d.open = false; });"
        )
        driver.save_screenshot(f"{shots}__{NARROW}.png")
    driver.set_window_size(WIDE, 1000)
    # a reader meets the page once it has laid itself out again at this width, not mid-resize
    _settle_frames(driver)
    t_checks = time.perf_counter()

    perf_log = driver.get_log("performance")
    remote, failed = _network(perf_log, origin)
    page_bytes, shared_bytes = first_load_bytes(perf_log, origin)
    problems["_first_load"] = {"page": page_bytes, "shared": shared_bytes}
    if chapter and page_bytes > FIRST_LOAD_BUDGET:
        add(
            "first-load",
            [
                f"a first visit loads {page_bytes / 1000:.0f} KB beyond the shared assets "
                f"(budget {FIRST_LOAD_BUDGET / 1000:.0f} KB)"
            ],
        )
    add("requests", [f"off localhost: {u}" for u in remote] + failed)
    add(
        "javascript",
        [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"],
    )
    add(
        "code-contrast",
        [
            f"code token {c['text']!r} ({c['cls']}): rgb({c['fg']}) on rgb({c['bg']}) is "
            f"{c['ratio']:.2f}:1 (at least 4.5:1)"
            for c in driver.execute_script(_CODE_CONTRAST_JS)
            if c["ratio"] < 4.5
        ],
    )
    # axe last, once the page's own requests are read: its CSSOM preload fetches the theme's
    # `@import "../basic.css"` against the page's URL (a 404 of axe's, not of the page)
    if axe_source is not None:
        driver.execute_script(axe_source)
        driver.set_script_timeout(
            AXE_TIMEOUT
        )  # the API reference's long page takes axe a while
        try:
            violations = driver.execute_async_script(_AXE_JS)
        finally:
            driver.set_script_timeout(PAGE_TIMEOUT)
        if isinstance(violations, dict):
            add("axe", [f"axe-core failed: {violations['error']}"])
        else:
            for v in violations:
                nodes = [
                    n for n in v["nodes"] if (n["impact"] or v["impact"]) in AXE_IMPACTS
                ]
                if nodes:
                    add(
                        "axe",
                        [
                            f"{v['id']} ({v['impact']}, {len(nodes)} nodes): {v['help']}; e.g. "
                            + "; ".join(f"{n['target']} {n['html']}" for n in nodes[:2])
                        ],
                    )
                    problems.setdefault("_axe_nodes", []).append(len(nodes))
    problems["_seconds"] = {
        "load": round(t_settle - t0, 2),
        "checks": round(t_checks - t_settle, 2),
        "axe": round(time.perf_counter() - t_checks, 2),
    }
    return problems


def _format(page, problems):
    lines = [f"{page}:"]
    for kind, items in sorted(problems.items()):
        if kind.startswith("_"):
            continue
        lines.append(f"  [{kind}] {len(items)}")
        lines.extend(f"    - {item}" for item in items[:12])
        if len(items) > 12:
            lines.append(f"    … and {len(items) - 12} more")
    return "\n".join(lines)


def test_site_has_pages(site):
    chapters = [p for p in PAGES if p.startswith("book/")]
    assert "index.html" in PAGES and chapters, f"no pages found in {site}"


@pytest.mark.parametrize("page", PAGES or ["<no site>"])
def test_page_as_a_reader_sees_it(page, site, server, browser, axe_source):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    stem = SCREENSHOTS / page.removesuffix(".html").replace("/", "__")
    chapter = (site / "_sources" / page.replace(".html", ".ipynb")).is_file()
    problems = inspect_page(
        browser,
        f"{server}/{page}",
        # axe-core is not run on the API reference (a 1.3 MB page of autodoc's uniform markup, which took it
        # 68 s, a tenth of the site test): its other checks stand, and the chapters' pages carry the same
        # theme and the same docstring markup through their links
        None if page == "book/api.html" else axe_source,
        static_html=(site / page).read_text(encoding="utf-8"),
        shots=str(stem),
        root=site,
        chapter=chapter,
    )
    # every view moves: its first control is moved and another precomputed frame must show
    from widget_probe import probe_views, view_states

    browser.set_window_size(1280, 1000)
    for k, state in enumerate(view_states(browser)):
        narrow = [
            c["label"]
            for c in state["controls"]
            if c["kind"] == "slider" and c["track"] < 50
        ]
        if narrow:
            problems.setdefault("widgets-move", []).append(
                f"view {k}: sliders without a track {narrow}"
            )
    for k, report in enumerate(probe_views(browser)):
        if report["changed"] is False:
            problems.setdefault("widgets-move", []).append(
                f"view {k} ({report['figure']}): moving its control ({report['moved']}) changed nothing"
            )
    if "bd-sidebar-primary" in (site / page).read_text(
        encoding="utf-8"
    ):  # a page of the theme (not a redirect)
        for kind, items in navigation_problems(
            browser, f"{server}/{page}", keyboard=page in KEYBOARD_PAGES, loaded=True
        ).items():
            problems.setdefault(kind, []).extend(items)
    Path(f"{stem}.problems.json").write_text(json.dumps(problems, indent=1))
    assert not {k for k in problems if not k.startswith("_")}, _format(page, problems)


# ----------------------------------------------------------------------------------------------
# Each check, shown to fail on a deliberately broken page (and to pass on a clean one).

_PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>{head}
<style>body {{ margin: 0; }} main {{ max-width: 700px; padding: 8px; }}
mjx-container[display="true"] {{ display: block; }}
mjx-math {{ display: inline-block; }}</style></head>
<body><main class="bd-article"><h1>{title}</h1>{body}</main></body></html>
"""

BROKEN_BODY = r"""
<p>The mechanism is $x$-private.</p>
<p>As shown by {cite:p}<code>liu2019</code>, clamping is biased.</p>
<p>| a | b |
|---|---|
| 1 | 2 |</p>
<p>The ratio \varphi is bounded.</p>
<p>See Theorem ?? for the proof.</p>
<div><p>```{prf:theorem}</p><p>:label: thm-broken</p><p>:::</p></div>
<mjx-container class="MathJax" jax="CHTML" display="true" id="too-wide"
  style="overflow: visible"><mjx-math style="width: 2000px">wide</mjx-math></mjx-container>
<mjx-container class="MathJax" jax="CHTML" display="true" id="cut-at-400"
  style="overflow: visible"><mjx-math style="width: 600px">medium</mjx-math></mjx-container>
<img src="plot.png" width="40" height="40">
<img src="plot.png" alt="1f2e3d4c5b6a7980.png" width="40" height="40">
<p style="color: #c8c8c8; background: #ffffff">Text too pale to read.</p>
<div class="wide-box" style="width: 900px">A box wider than a phone's screen.</div>
<div class="cell_output"><img src="tiny-text.png" alt="A curve whose labels are too small to read"
  style="width: 100px"></div>
<div style="overflow: hidden; width: 200px"><p><code style="white-space: nowrap">classroom.check("ch02-ex-scale",
  [1.95, 1.61, 1.27, 1.11, 0.99])</code></p></div>
<div class="cell_output"><table><tr><td style="width: 40px">a long cell that wraps</td></tr></table></div>
<div class="highlight" style="background: #fefefe"><pre><span class="n" style="color: #080808">x</span>
<span class="c1" style="color: #b0b0b0"># a pale comment</span></pre></div>
<script src="heavy.js"></script>
"""
BROKEN_HEAD = '<link rel="stylesheet" href="missing.css">'

CLEAN_BODY = r"""
<p>The mechanism is <em>ε</em>-private (see Theorem 3.1 and Liu, 2019).</p>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
<mjx-container class="MathJax" jax="CHTML" display="true"
  style="overflow-x: auto; max-width: 100%"><mjx-math style="width: 600px">medium</mjx-math></mjx-container>
<img src="plot.png" alt="The bias of clamping against the true count, for three scales" width="40" height="40">
<div class="cell_output"><img src="big-text.png" alt="The variance of truncation against the scale"></div>
<p><code>classroom.check("ch02-ex-scale", [1.95, 1.61])</code></p>
<div class="highlight" style="background: #fefefe"><pre><span class="n" style="color: #080808">x</span>
<span class="c1" style="color: #515151"># a comment</span></pre></div>
"""

#: (kind, what the report must name): one per deliberate fault of the broken page
BROKEN_FAULTS = [
    ("markup", "$"),
    ("markup", "{cite:p}"),
    ("markup", "|---|"),
    ("markup", "| a | b |"),
    ("markup", "\\varphi"),
    ("markup", "??"),
    ("markup", "```"),
    ("markup", ":label:"),
    ("markup", ":::"),
    (f"equation-{WIDE}", "2000 px"),
    (f"equation-{NARROW}", "(600 px) is cut"),
    (f"overflow-{NARROW}", "wide-box"),
    (f"figure-text-{NARROW}", "smallest text 3.0 CSS px"),
    (f"cut-{NARROW}", "classroom.check"),
    (f"cut-{NARROW}", "wraps onto"),
    ("first-load", "budget"),
    ("alt", "no alt attribute"),
    ("alt", "1f2e3d4c5b6a7980.png"),
    ("requests", "HTTP 404"),
    ("requests", "missing.css"),
    ("javascript", "missing.css"),
    ("axe", "image-alt"),
    ("axe", "color-contrast"),
    ("code-contrast", "'# a pale comment' (c1): rgb(176,176,176) on rgb(254,254,254)"),
]


@pytest.fixture(scope="module")
def test_pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("broken-site")
    _TEST_ROOT["root"] = root
    (root / "plot.png").write_bytes(_PNG)
    # figures recording their smallest text: 12 px in a 400 px image (3 CSS px shown 100 px wide), 20 px
    (root / "tiny-text.png").write_bytes(_text_png(400, 12.0))
    (root / "big-text.png").write_bytes(_text_png(300, 20.0))
    (root / "heavy.js").write_text("/*" + "x" * (FIRST_LOAD_BUDGET + 50_000) + "*/")
    (root / "broken.html").write_text(
        _PAGE.format(title="Broken", head=BROKEN_HEAD, body=BROKEN_BODY)
    )
    (root / "clean.html").write_text(
        _PAGE.format(title="Clean", head="", body=CLEAN_BODY)
    )
    httpd, url = _serve(root)
    yield url
    httpd.shutdown()
    httpd.server_close()


_TEST_ROOT = {}


def _text_png(width, text_px):
    """A ``width``-px PNG recording ``text_px`` as its smallest text (as the book's figures do)."""
    import io

    from PIL import Image, PngImagePlugin

    info = PngImagePlugin.PngInfo()
    info.add_text(TEXT_SIZE_KEY, f"{text_px:.2f}")
    out = io.BytesIO()
    Image.new("RGB", (width, width // 2), "white").save(out, "png", pnginfo=info)
    return out.getvalue()


@pytest.fixture(scope="module")
def broken_report(test_pages, browser, axe_source):
    return inspect_page(
        browser,
        f"{test_pages}/broken.html",
        axe_source,
        root=_TEST_ROOT["root"],
        chapter=True,
    )


@pytest.mark.parametrize(
    "kind, needle", BROKEN_FAULTS, ids=[f"{k}:{n}" for k, n in BROKEN_FAULTS]
)
def test_check_flags_broken_page(kind, needle, broken_report):
    found = broken_report.get(kind, [])
    assert any(needle in item for item in found), (
        f"the {kind} check missed {needle!r} on the broken page; it reported {found}"
    )


def test_checks_pass_a_clean_page(test_pages, browser, axe_source):
    problems = inspect_page(
        browser,
        f"{test_pages}/clean.html",
        axe_source,
        root=_TEST_ROOT["root"],
        chapter=True,
    )
    assert not {k for k in problems if not k.startswith("_")}, _format(
        "clean.html", problems
    )


# The navigation check, on a page whose buttons do nothing (what pydata-sphinx-theme 0.17 did to
# sphinx-book-theme: its script bound a hidden copy of each button) and on one whose buttons work.

_NAV_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Navigation</title>
<style>
body {{ margin: 0; }} .bd-sidebar-primary, .bd-sidebar-secondary {{ width: 250px; height: 400px; background: #eee; }}
.bd-sidebar-primary {{ float: left; }} .bd-sidebar-secondary {{ float: right; }}
.wide-hidden {{ display: none; }}
@media (max-width: 960px) {{
  .bd-sidebar-primary, .bd-sidebar-secondary {{ position: fixed; top: 0; left: -300px; }}
  .open {{ left: 0; }}
}}
</style></head><body>
<button class="primary-toggle">☰</button><button class="secondary-toggle">Contents</button>
<div class="bd-sidebar-primary"><nav><a href="#">Chapter 1</a></nav></div>
<div class="bd-sidebar-secondary"><nav><a href="#s">Section</a></nav></div>
<main><h1 id="s">A page</h1></main>
<script>{script}</script></body></html>"""
_NAV_WORKING = """
document.querySelector('.primary-toggle').addEventListener('click', () => {
  const p = document.querySelector('.bd-sidebar-primary');
  if (innerWidth > 960) p.classList.toggle('wide-hidden'); else p.classList.toggle('open');
});
document.querySelector('.secondary-toggle').addEventListener('click', () =>
  document.querySelector('.bd-sidebar-secondary').classList.toggle('open'));
"""


@pytest.fixture(scope="module")
def nav_pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("nav-site")
    (root / "dead.html").write_text(_NAV_PAGE.format(script=""))
    (root / "working.html").write_text(_NAV_PAGE.format(script=_NAV_WORKING))
    # the page-contents button hidden: what a page checked without the keyboard must still flag
    (root / "no-outline-button.html").write_text(
        _NAV_PAGE.format(
            script=_NAV_WORKING
            + "document.querySelector('.secondary-toggle').style.display = 'none';"
        )
    )
    httpd, url = _serve(root)
    yield url
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.slow
def test_navigation_check_flags_dead_buttons(nav_pages, browser):
    problems = navigation_problems(browser, f"{nav_pages}/dead.html")
    wide, narrow = (
        problems.get(f"navigation-{WIDE}", []),
        problems.get(f"navigation-{NARROW}", []),
    )
    assert any("does not collapse" in p for p in wide), problems
    assert any("☰ (click) opens nothing" in p for p in narrow), problems
    assert any("contents button (Space) opens nothing" in p for p in narrow), problems
    # on the page the checks have just read (no fresh load at 1280 px) the dead ☰ is still flagged
    browser.set_window_size(WIDE, 1000)
    browser.get(f"{nav_pages}/dead.html")
    problems = navigation_problems(
        browser, f"{nav_pages}/dead.html", keyboard=False, loaded=True
    )
    assert any(
        "does not collapse" in p for p in problems.get(f"navigation-{WIDE}", [])
    ), problems


@pytest.mark.slow
def test_navigation_check_passes_working_buttons(nav_pages, browser):
    assert navigation_problems(browser, f"{nav_pages}/working.html") == {}
    assert (
        navigation_problems(browser, f"{nav_pages}/working.html", keyboard=False) == {}
    )
    browser.get(f"{nav_pages}/working.html")
    assert (
        navigation_problems(
            browser, f"{nav_pages}/working.html", keyboard=False, loaded=True
        )
        == {}
    )


@pytest.mark.slow
def test_navigation_check_without_the_keyboard_flags_a_hidden_outline_button(
    nav_pages, browser
):
    problems = navigation_problems(
        browser, f"{nav_pages}/no-outline-button.html", keyboard=False
    )
    assert problems == {
        f"navigation-{NARROW}": ["no visible the contents button (.secondary-toggle)"]
    }, problems


# ----------------------------------------------------------------------------------------------
# Links: every internal link of every page resolves (a file of the site, and its #anchor there).

_LINK = re.compile(
    r"""<(?:a|link|img|script|source|iframe)\b[^>]*?\b(?:href|src)=(["'])(.*?)\1""",
    re.S | re.I,
)


def dead_links(site, pages):
    """``[page: link (why)]`` for the links of ``pages`` (paths relative to ``site``) that resolve to nothing."""
    import html as html_lib

    site = Path(site)
    ids = {}

    def anchors(path):
        if path not in ids:
            text = path.read_text(encoding="utf-8", errors="replace")
            ids[path] = set(re.findall(r"""\b(?:id|name)=["']([^"']+)["']""", text))
        return ids[path]

    out = []
    for page in pages:
        path = site / page
        text = path.read_text(encoding="utf-8", errors="replace")
        for _, raw in _LINK.findall(text):
            link = html_lib.unescape(raw).strip()
            parts = urlsplit(link)
            if (
                parts.scheme
                or parts.netloc
                or link.startswith(("javascript:", "data:", "mailto:"))
                or not link
            ):
                continue
            target = path if not parts.path else (path.parent / parts.path).resolve()
            if parts.path.endswith("/") or target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                out.append(f"{page}: {link} (no such file)")
                continue
            frag = parts.fragment
            if frag and target.suffix == ".html" and frag not in anchors(target):
                out.append(
                    f"{page}: {link} (no #{frag} in {target.relative_to(site).as_posix()})"
                )
    return sorted(set(out))


def test_link_check_flags_dead_links(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a href="b.html#there">ok</a> <a href="c.html">dead</a> '
        '<a href="b.html#nowhere">dead anchor</a> <img src="x.png" alt="x"> '
        '<a href="https://example.org/">remote</a> <a href="#top">self</a>'
        '<h1 id="top">A</h1>'
    )
    (tmp_path / "b.html").write_text('<h1 id="there">B</h1>')
    found = dead_links(tmp_path, ["a.html", "b.html"])
    assert found == [
        "a.html: b.html#nowhere (no #nowhere in b.html)",
        "a.html: c.html (no such file)",
        "a.html: x.png (no such file)",
    ], found


def test_every_internal_link_resolves(site):
    found = dead_links(site, PAGES)
    assert not found, f"{len(found)} dead links:\n  " + "\n  ".join(found[:40])


def test_views_frames_are_files_of_the_site(site):
    """No page embeds a view's frames: each is a file under ``_views/`` that exists (fetched when selected)."""
    embedded, missing, frames = [], [], 0
    for page in PAGES:
        html = (site / page).read_text(encoding="utf-8")
        if (
            "application/vnd.jupyter.widget-state+json" in html
            and "data:image/png;base64" in html
        ):
            embedded.append(page)
        for ref in set(re.findall(r"((?:\.\./)*_views/[0-9a-f]+\.png)", html)):
            frames += 1
            if not ((site / page).parent / ref).resolve().is_file():
                missing.append(f"{page}: {ref}")
    assert not embedded, f"pages embedding their views' frames: {embedded}"
    assert not missing, f"frames referenced but not in the site: {missing[:10]}"
    assert frames > 0, "no page references a view frame (the views are gone?)"


def test_intro_links_the_print_edition_page_which_never_dead_ends(site):
    """The intro links the print-edition page; it links the PDF when the site has it, else says how to build it."""
    intro = (site / "book" / "intro.html").read_text(encoding="utf-8")
    assert re.search(r'href="\.\./print-edition\.html"', intro), (
        "the intro does not link print-edition.html"
    )
    page = (site / "print-edition.html").read_text(encoding="utf-8")
    if (site / "dpbook.pdf").is_file():
        assert 'href="dpbook.pdf"' in page, (
            "the site has dpbook.pdf but its print-edition page does not link it"
        )
    else:
        assert '.pdf"' not in page and "tools/print_edition.py" in page, (
            "without the PDF the print-edition page must say how to build it, and link no PDF"
        )


# ----------------------------------------------------------------------------------------------
# Search: the results' snippets read as text (no TeX source), and there is one search box.

_SEARCH_JS = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now();
(function poll() {
  const items = document.querySelectorAll('#search-results li');
  const snippets = document.querySelectorAll('#search-results p.context');
  const finished = document.querySelector('#search-results > p, .search-summary');
  if ((snippets.length >= Math.min(items.length, 5) && items.length > 0 && finished) || Date.now() - t0 > 30000) {
    return done({items: items.length, snippets: Array.from(snippets).map(p => p.textContent)});
  }
  setTimeout(poll, 200);
})();
"""


def test_search_snippets_read_as_text(site, server, browser):
    browser.set_window_size(WIDE, 1000)
    browser.get(f"{server}/search.html?q=epsilon")
    found = browser.execute_async_script(_SEARCH_JS)
    assert found["items"] > 0 and found["snippets"], f"searching finds nothing: {found}"
    problems = markup_problems("\n".join(found["snippets"]))
    assert not problems, "search snippets show raw markup:\n  " + "\n  ".join(
        problems[:10]
    )


def test_one_search_box_at_each_width(site, server, browser):
    for width in (WIDE, NARROW):
        browser.set_window_size(width, 900)
        browser.get(f"{server}/book/intro.html")
        boxes = [
            e
            for e in browser.find_elements(
                "css selector",
                ".search-button__button, .search-button-field, "
                ".search-button, input[type=search]",
            )
            if e.is_displayed()
        ]
        assert len(boxes) == 1, f"{len(boxes)} search boxes/buttons shown at {width} px"
    browser.set_window_size(WIDE, 1000)


# ----------------------------------------------------------------------------------------------
# The API reference: examples are code blocks, and each section lists what it documents.


def _api_html(site):
    path = site / "book" / "api.html"
    if not path.is_file():
        pytest.fail("book/api.md is not in the built site")
    return path.read_text(encoding="utf-8")


def examples_in_field_lists(html):
    """The ``>>>`` lines of docstring examples rendered inside a field list (Parameters, Returns...)."""
    out = []
    for block in re.findall(
        r'<dl class="field-list[^"]*">(.*?)</dl>\s*(?=<|$)', html, flags=re.S
    ):
        text = re.sub(r"<[^>]+>", "", block)
        out.extend(
            line.strip()[:100]
            for line in text.splitlines()
            if "&gt;&gt;&gt;" in line or ">>>" in line
        )
    return out


def test_api_check_flags_examples_in_field_lists():
    broken = (
        '<dl class="field-list simple"><dt>Returns</dt><dd><ul><li><p><strong>&gt;&gt;&gt; '
        "mech.bias(0.1)</strong></p></li></ul></dd>\n</dl>"
    )
    clean = (
        '<dl class="field-list simple"><dt>Returns</dt><dd><p>float</p></dd>\n</dl>'
        '<p class="rubric">Examples</p><div class="highlight"><pre>&gt;&gt;&gt; mech.bias(0.1)</pre></div>'
    )
    assert examples_in_field_lists(broken) and not examples_in_field_lists(clean)


def test_api_examples_render_as_code_blocks(site):
    found = examples_in_field_lists(_api_html(site))
    assert not found, (
        f"{len(found)} docstring examples render inside a Parameters/Returns list instead of an "
        "Examples section (numpydoc):\n  " + "\n  ".join(found[:20])
    )


def test_api_sections_list_what_they_document(site):
    """Every documented class or function of the API page is linked from its section's summary table."""
    html = _api_html(site)
    documented = set(
        re.findall(r'<dt class="sig sig-object py" id="dpbook\.([A-Za-z_]\w*)">', html)
    )
    listed = set(
        re.findall(r'<table class="autosummary[^"]*">.*?</table>', html, flags=re.S)
        and re.findall(
            r'href="#dpbook\.([A-Za-z_]\w*)"',
            "".join(
                re.findall(
                    r'<table class="autosummary[^"]*">.*?</table>', html, flags=re.S
                )
            ),
        )
    )
    assert documented, "no documented object found on the API page"
    assert not documented - listed, (
        f"documented but in no section's contents table: {sorted(documented - listed)}"
    )


# A code cell that starts to overflow only when its web font arrives (what sank a CI run: the theme
# gives a region a keyboard stop only if it overflows when the theme's script runs).

_LATE_FONT_PAGE = """<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Late font</title>
<style>@font-face {{ font-family: "Late"; src: url("late.ttf?slow"); }}
main {{ width: 420px; }}
pre {{ font-family: "Late", "DejaVu Sans", sans-serif; font-size: 13px; overflow: auto; }}</style>
{script}<script>
window.addEventListener("DOMContentLoaded", () => document.querySelectorAll("pre").forEach(e => {{
  e.tabIndex = e.scrollWidth > e.clientWidth ? 0 : -1; }}));  // the theme's rule, run once
</script></head><body><main><h1>Late font</h1><pre id="code">{text}</pre></main></body></html>"""


class _SlowFontHandler(_QuietHandler):
    def do_GET(self):
        if "?slow" in self.path:
            time.sleep(0.5)
            self.path = self.path.split("?")[0]
        return super().do_GET()


def _late_font_font():
    for name in (
        "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf",
        *glob.glob("/usr/share/fonts/**/DejaVuSansMono.ttf", recursive=True),
    ):
        if Path(name).is_file():
            return Path(name)
    _unavailable("DejaVu Sans Mono (fonts-dejavu-core) is not installed")


def test_code_that_overflows_once_its_font_arrives_gets_a_keyboard_stop(
    tmp_path, browser
):
    root = tmp_path / "late-font"
    root.mkdir()
    shutil.copy(_late_font_font(), root / "late.ttf")
    shutil.copy(ROOT / "_static" / "dpbook-tabstops.js", root / "dpbook-tabstops.js")
    text = (
        "i" * 60
    )  # narrow in the fallback face, 470 px in the monospace one that arrives late
    for name, script in (
        ("without", ""),
        ("with", '<script src="dpbook-tabstops.js"></script>'),
    ):
        (root / f"{name}.html").write_text(
            _LATE_FONT_PAGE.format(script=script, text=text)
        )
    httpd = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_SlowFontHandler, directory=str(root))
    )
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{httpd.server_address[1]}"
    state = {}
    try:
        for name in ("without", "with"):
            browser.get(f"{url}/{name}.html")
            state[name] = browser.execute_async_script(
                "const done = arguments[arguments.length - 1];"
                "document.fonts.ready.then(() => requestAnimationFrame(() => requestAnimationFrame(() => {"
                "  const e = document.getElementById('code');"
                "  done({overflows: e.scrollWidth > e.clientWidth, tab: e.tabIndex});"
                "})));"
            )
    finally:
        httpd.shutdown()
        httpd.server_close()
    # the scenario is real: without the script the late font leaves an overflowing region unreachable
    assert state["without"] == {"overflows": True, "tab": -1}, state
    assert state["with"] == {"overflows": True, "tab": 0}, state


# ----------------------------------------------------------------------------------------------
# JupyterLite: the lab, offline (only its Pyodide kernel needs the network).

_LITE_JS = r"""
const done = arguments[arguments.length - 1];
const t0 = Date.now(), limit = arguments[0] * 1000;
const nb = () => document.querySelector('.jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook');
let last = '', stable = 0;
function poll() {
  const root = nb();
  const cells = root ? root.querySelectorAll('.jp-Cell') : [];
  const md = root ? Array.from(root.querySelectorAll('.jp-MarkdownCell')) : [];
  const code = root ? root.querySelectorAll('.jp-CodeCell') : [];
  // every markdown cell rendered by jupyterlab-myst (its output is a .myst widget), every editor
  // drawn, and nothing changed for a second
  const ready = cells.length > 0
    && md.every(c => { const r = c.querySelector('.myst'); return r && r.querySelector('*'); })
    && root.querySelectorAll('.jp-CodeCell .cm-content').length === code.length;
  const sig = cells.length + ':' + (root ? root.querySelectorAll('.myst *').length : 0);
  stable = (ready && sig === last) ? stable + 1 : 0;
  last = sig;
  if (stable < 5 && Date.now() - t0 < limit) return setTimeout(poll, 200);
  if (!root) return done({cells: 0});
  // the rendered text of each markdown cell, outside math and code
  const rendered = md.map(c => {
    const r = c.querySelector('.myst');
    if (!r) return '(not rendered) ' + c.textContent;
    const clone = r.cloneNode(true);
    clone.querySelectorAll('pre, code, .math, mjx-container, .MathJax, .katex, math, script, style')
      .forEach(e => e.remove());
    return clone.textContent;
  });
  const sources = Array.from(root.querySelectorAll('.jp-CodeCell .cm-content'))
    .slice(0, 3).map(c => Array.from(c.querySelectorAll('.cm-line')).map(l => l.textContent).join('\n'));
  const count = (sel) => root.querySelectorAll(sel).length;
  const tab = document.querySelector('#jp-main-dock-panel .lm-TabBar-tab.lm-mod-current .lm-TabBar-tabLabel');
  done({cells: cells.length, markdown: rendered, code: sources, tab: tab ? tab.textContent : null,
        // jupyterlab-myst's blocks: {prf:*} directives, {exercise}, admonitions
        theorems: count('.myst-proof'), exercises: count('.myst-exercise'),
        admonitions: count('.myst-admonition'),
        // what jupyterlab-myst shows for a citation or reference it cannot resolve
        unresolved: Array.from(root.querySelectorAll('[title*="Not Found"], [title*="not found"]'))
          .map(e => e.textContent.trim().slice(0, 80))});
}
poll();
"""


# In a lab already open (the site's JupyterLite exposes its app as window.jupyterapp): dispose of
# every tab, then open the notebook at arguments[0]; true, or the error.
_LITE_OPEN_JS = r"""
const done = arguments[arguments.length - 1];
const path = arguments[0];
const app = window.jupyterapp;
try {
  // dispose of the open tabs (no "save your changes?" dialog: nothing here is edited)
  for (const w of Array.from(app.shell.widgets('main'))) { w.dispose(); }
} catch (e) { done('closing the tabs: ' + String(e)); }
app.commands.execute('docmanager:open', {path: path})
  .then(() => done(true), (e) => done(String(e)));
"""


_FORGET_JS = r"""
const done = arguments[arguments.length - 1];
localStorage.clear();
sessionStorage.clear();
indexedDB.databases().then(dbs => Promise.all(dbs.map(db => new Promise(ok => {
  const req = indexedDB.deleteDatabase(db.name);
  req.onsuccess = req.onerror = req.onblocked = () => ok();
})))).then(() => done(true), () => done(false));
"""


def _notebook_blocks(nb_path):
    """How many theorem-like, exercise and admonition directives the notebook's markdown holds."""
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    text = "\n".join(
        "".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown"
    )
    return {
        "theorems": len(re.findall(r"^(?:`{3,}|:{3,})\{prf:[a-z]+\}", text, re.M)),
        "exercises": len(re.findall(r"^(?:`{3,}|:{3,})\{exercise", text, re.M)),
        "admonitions": len(
            re.findall(
                r"^(?:`{3,}|:{3,})\{(?:note|tip|warning|important|caution|"
                r"admonition|hint|seealso|attention|danger|error)\}",
                text,
                re.M,
            )
        ),
    }


@pytest.mark.parametrize("notebook", _book_notebooks() or ["<no site>"])
def test_lite_lab_renders_the_chapter(notebook, site, server, browser):
    lite = site / "lite" / "files" / notebook
    if not lite.is_file():
        pytest.fail(f"{notebook} is not in the lite site")
    browser.set_window_size(WIDE, 1000)
    if browser.execute_script(
        "return !!window.jupyterapp"
    ) and browser.current_url.startswith(f"{server}/lite/lab/"):
        # the lab this browser opened for the chapter before: close every tab, open this one
        opened = browser.execute_async_script(_LITE_OPEN_JS, notebook)
        assert opened is True, f"the lite lab could not open {notebook}: {opened}"
    else:
        # a fresh lab: JupyterLite keeps its workspace (the chapters opened before) in the browser
        browser.get(f"{server}/index.html")
        browser.execute_async_script(_FORGET_JS)
        browser.get(f"{server}/lite/lab/index.html?path={quote(notebook)}")
    state = browser.execute_async_script(_LITE_JS, 40)
    assert state["cells"] > 0, f"the lite lab did not open {notebook}"
    # the lab restores the chapters opened before; the one read must be this one
    assert state["tab"] == notebook.rsplit("/", 1)[-1], (
        f"the lab shows {state['tab']!r}, not {notebook}"
    )
    problems = []
    for k, text in enumerate(state["markdown"]):
        problems.extend(f"markdown cell {k}: {item}" for item in markup_problems(text))
    problems.extend(
        f"unresolved in the lite lab: {text!r}" for text in state["unresolved"]
    )
    if not any(LITE_INSTALL_MARK in c for c in state["code"]):
        problems.append(
            f"no install cell ({LITE_INSTALL_MARK!r}) among the first code cells: {state['code']}"
        )
    expected = _notebook_blocks(lite)
    for kind, n in expected.items():
        if state[kind] != n:
            problems.append(
                f"the notebook has {n} {kind} directives but {state[kind]} rendered as blocks"
            )
    assert not problems, f"lite/{notebook}:\n  " + "\n  ".join(problems[:30])


def test_lite_site_ships_the_wheel_and_the_notebooks(site):
    lite = site / "lite"
    assert (lite / "index.html").is_file() and (
        lite / "lab" / "index.html"
    ).is_file(), "no JupyterLite site at _build/html/lite"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert any(
        "pypi/all.json" in u
        for u in config.get("litePluginSettings", {})
        .get("@jupyterlite/pyodide-kernel-extension:kernel", {})
        .get("pipliteUrls", [])
    ), "the lite site does not index its own wheels"
    assert "jupyterlab-myst" in config.get("federated_extensions", [{}]).__repr__(), (
        "the lite site lacks the jupyterlab-myst extension (MyST markdown would show raw)"
    )
    index = json.loads((lite / "pypi" / "all.json").read_text())
    assert "dpbook" in index, (
        f"dpbook is not in the lite piplite index: {sorted(index)}"
    )
    wheels = sorted((lite / "pypi").glob("dpbook-*-py3-none-any.whl"))
    assert wheels, "no pure-Python dpbook wheel in the lite site"
    with zipfile.ZipFile(wheels[-1]) as whl:
        names = set(whl.namelist())
    for package in ("dpbook", "dpbook_book"):
        modules = {
            p.relative_to(ROOT).as_posix()
            for p in (ROOT / package).rglob("*.py")
            if "__pycache__" not in p.parts
        }
        assert f"{package}/__init__.py" in names and modules <= names, (
            f"the lite wheel lacks {sorted(modules - names) or package}"
        )
    for nb in _book_notebooks():
        assert (lite / "files" / nb).is_file(), f"{nb} is not in the lite site"


def test_launch_buttons_point_into_the_site(site):
    chapters = [
        p
        for p in PAGES
        if p.startswith("book/")
        and (site / "_sources" / p.replace(".html", ".ipynb")).is_file()
    ]
    if not chapters:
        pytest.skip("no notebook chapter in the site yet")
    for page in chapters:
        html = (site / page).read_text(encoding="utf-8")
        for host in ("mybinder.org", "colab.research.google.com"):
            assert host in html, f"{page} has no {host} launch button"
        links = re.findall(r'href="([^"]*lite/lab/index\.html\?path=[^"]+)"', html)
        assert links, f"{page} has no JupyterLite launch button"
        target, path = links[0].split("?path=")
        assert ((site / page).parent / target).resolve() == (
            site / "lite/lab/index.html"
        ).resolve()
        assert (site / "lite" / "files" / path).is_file(), (
            f"{page} launches a missing {path}"
        )


def _run_times(status_html):
    """(notebook, seconds) rows of the {nb-exec-table} on the status page."""
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", status_html, flags=re.S)
    header = [
        re.sub(r"<[^>]+>", "", c).strip()
        for c in re.findall(r"<th[^>]*>(.*?)</th>", rows[0], re.S)
    ]
    col_doc, col_time = header.index("Document"), header.index("Run Time (s)")
    out = []
    for row in rows[1:]:
        cells = [
            re.sub(r"<[^>]+>", "", c).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        ]
        if len(cells) == len(header) and cells[col_time]:
            out.append((cells[col_doc], float(cells[col_time])))
    return out


def test_status_page_lists_every_chapters_run_time(site):
    status = site / "book" / "status.html"
    if not status.is_file():
        if REQUIRED:
            pytest.fail("book/status.md is not in the built site (add it to _toc.yml)")
        pytest.skip("no status page in the site")
    times = _run_times(status.read_text(encoding="utf-8"))
    notebooks = _book_notebooks()
    assert len(times) == len(notebooks), (
        f"status table rows {times} vs notebooks {notebooks}"
    )
    assert all(t > 0 for _, t in times), f"a chapter without its run time: {times}"
    slow = [(doc, t) for doc, t in times if t > PER_CHAPTER_BUDGET]
    assert not slow, f"chapters over {PER_CHAPTER_BUDGET:.0f} s: {slow}"
