"""The built site, tested as a reader would see it: every page in headless Chromium, with no network.

The site (``_build/html``, or ``$DPBOOK_SITE_DIR``) is served on 127.0.0.1 and every page of the book
is loaded in Debian's Chromium through its chromedriver.  For each page the test asserts that

- no request leaves localhost (every request is logged through the DevTools performance log, and
  the browser resolves no other host, so a page that needs the network also breaks visibly);
- no JavaScript error or failed load is reported (console level SEVERE);
- MathJax has typeset everything: no ``$$``, ``\\(``, ``\\[`` or ``\\begin`` is left in the text
  outside code;
- every ``<img>`` has loaded (``naturalWidth > 0``);
- every widget snapshot is rendered: each widget-view script is preceded by the widget DOM the
  HTML manager builds, holding the default figure as a loaded image;

and saves a screenshot under ``_build/screenshots/``.  Further tests check the JupyterLite site
(built, with the dpbook wheel and every notebook) and the status page's execution times.

Without a built site, or without Chromium, the tests skip — unless ``DPBOOK_SITE_TEST=required``
(set by ``.ci/run`` after the build), in which case they fail.
"""

from __future__ import annotations

import functools
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
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
SITE = Path(os.environ.get("DPBOOK_SITE_DIR", ROOT / "_build" / "html")).resolve()
SCREENSHOTS = SITE.parent / "screenshots"
REQUIRED = os.environ.get("DPBOOK_SITE_TEST", "").lower() == "required"
#: folders of the site that hold assets or other apps, not pages of the book
NOT_PAGES = {"_static", "_offline", "_sources", "_images", "lite", "_downloads"}
#: the whole book must execute within this many seconds, one chapter within PER_CHAPTER_BUDGET
BOOK_BUDGET = 300.0
PER_CHAPTER_BUDGET = 60.0
PAGE_TIMEOUT = 60.0
#: how long a page may take to settle (MathJax typeset, widgets rendered)
SETTLE_TIMEOUT = 20.0
RAW_TEX = ("$$", "\\(", "\\)", "\\[", "\\begin{")


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


@pytest.fixture(scope="module")
def site():
    if not (SITE / "index.html").is_file():
        _unavailable(f"no built site at {SITE}: run `jupyter-book build .` first")
    return SITE


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def server(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _chromium():
    for candidate in (os.environ.get("DPBOOK_CHROMIUM"), "/usr/lib/chromium/chromium",
                      shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser(server):
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
    for arg in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--no-first-run",
                "--disable-dev-shm-usage", "--window-size=1280,1000", f"--user-data-dir={profile}",
                # resolve no host but this one: the site must work with no network at all
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"):
        opts.add_argument(arg)
    opts.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    driver = webdriver.Chrome(options=opts, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    driver.set_script_timeout(PAGE_TIMEOUT)
    driver.get("about:blank")
    time.sleep(0.5)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


# Waits until the page is complete, MathJax (if the page loads it) has typeset, and every widget
# snapshot has been rendered with its images loaded; then reports what the assertions need.
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
  const skip = 'pre, code, script, style, textarea, mjx-container, .highlight';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const texts = [];
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    if (n.parentElement && !n.parentElement.closest(skip)) texts.push(n.textContent);
  }
  done({
    mathjax: mathjax,
    text: texts.join(' '),
    images: Array.from(document.images).map(i => ({src: i.currentSrc || i.src,
      ok: i.complete && i.naturalWidth > 0})),
    views: views().map((s, k) => ({index: k, rendered: rendered(s)})),
    title: document.title,
  });
}
function poll() {
  const expired = Date.now() - t0 > limit;
  if (document.readyState !== 'complete' && !expired) return setTimeout(poll, 50);
  const hasMathJax = !!document.querySelector('script[src*="mathjax"]');
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


def _requests(perf_log):
    urls = []
    for entry in perf_log:
        message = json.loads(entry["message"])["message"]
        if message.get("method") == "Network.requestWillBeSent":
            urls.append(message["params"]["request"]["url"])
    return urls


def _is_local(url, origin):
    scheme = urlsplit(url).scheme
    return url.startswith(origin + "/") or scheme in {"data", "blob", "about"}


def test_site_has_pages(site):
    chapters = [p for p in PAGES if p.startswith("book/")]
    assert "index.html" in PAGES and chapters, f"no pages found in {site}"


@pytest.mark.parametrize("page", PAGES or ["<no site>"])
def test_page_renders_offline(page, site, server, browser):
    browser.get_log("performance")
    browser.get_log("browser")
    browser.get(f"{server}/{page}")
    state = browser.execute_async_script(_SETTLE_JS, SETTLE_TIMEOUT)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    stem = page.removesuffix(".html").replace("/", "__")
    browser.save_screenshot(str(SCREENSHOTS / f"{stem}.png"))
    for k, widget in enumerate(browser.find_elements("css selector", ".widget-subarea")):
        widget.screenshot(str(SCREENSHOTS / f"{stem}__widget{k}.png"))
    requests = _requests(browser.get_log("performance"))
    console = browser.get_log("browser")

    problems = []
    remote = sorted({u for u in requests if not _is_local(u, server)})
    if remote:
        problems.append(f"requests off localhost: {remote}")
    errors = [e["message"] for e in console if e["level"] == "SEVERE"]
    if errors:
        problems.append(f"JavaScript errors / failed loads: {errors}")
    if state["mathjax"] not in {"absent", "typeset"}:
        problems.append(f"MathJax {state['mathjax']}")
    raw = {tex: state["text"][max(0, i - 60): i + 60]
           for tex in RAW_TEX if (i := state["text"].find(tex)) >= 0}
    if raw:
        problems.append(f"TeX left untypeset: {raw}")
    broken = [img["src"][:120] for img in state["images"] if not img["ok"]]
    if broken:
        problems.append(f"images that did not load: {broken}")
    n_views = (site / page).read_text(encoding="utf-8").count(
        'type="application/vnd.jupyter.widget-view+json"')
    unrendered = [v["index"] for v in state["views"] if not v["rendered"]]
    if unrendered or len(state["views"]) != n_views:
        problems.append(f"widget snapshots not rendered with their figure: #{unrendered} of {n_views}")
    assert not problems, f"{page}:\n  " + "\n  ".join(problems)


def _book_notebooks():
    """The notebooks the site was built from (jupyter-book copies each source to ``_sources/``)."""
    return sorted(p.relative_to(SITE / "_sources").as_posix() for p in (SITE / "_sources").rglob("*.ipynb"))


def test_lite_site_ships_the_wheel_and_the_notebooks(site):
    lite = site / "lite"
    assert (lite / "index.html").is_file() and (lite / "lab" / "index.html").is_file(), \
        "no JupyterLite site at _build/html/lite"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    assert any("pypi/all.json" in u for u in config.get("litePluginSettings", {}).get(
        "@jupyterlite/pyodide-kernel-extension:kernel", {}).get("pipliteUrls", [])), \
        "the lite site does not index its own wheels"
    index = json.loads((lite / "pypi" / "all.json").read_text())
    assert "dpbook" in index, f"dpbook is not in the lite piplite index: {sorted(index)}"
    wheels = sorted((lite / "pypi").glob("dpbook-*-py3-none-any.whl"))
    assert wheels, "no pure-Python dpbook wheel in the lite site"
    with zipfile.ZipFile(wheels[-1]) as whl:
        names = set(whl.namelist())
    assert {"dpbook/__init__.py", "dpbook/laplace.py", "dpbook/widgets/__init__.py"} <= names
    for nb in _book_notebooks():
        assert (lite / "files" / nb).is_file(), f"{nb} is not in the lite site"


def test_launch_buttons_point_into_the_site(site):
    chapters = [p for p in PAGES if p.startswith("book/") and (site / "_sources" / p.replace(
        ".html", ".ipynb")).is_file()]
    if not chapters:
        pytest.skip("no notebook chapter in the site yet")
    for page in chapters:
        html = (site / page).read_text(encoding="utf-8")
        for host in ("mybinder.org", "colab.research.google.com"):
            assert host in html, f"{page} has no {host} launch button"
        links = re.findall(r'href="([^"]*lite/lab/index\.html\?path=[^"]+)"', html)
        assert links, f"{page} has no JupyterLite launch button"
        target, path = links[0].split("?path=")
        assert ((site / page).parent / target).resolve() == (site / "lite/lab/index.html").resolve()
        assert (site / "lite" / "files" / path).is_file(), f"{page} launches a missing {path}"


def _run_times(status_html):
    """(notebook, seconds) rows of the {nb-exec-table} on the status page."""
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", status_html, flags=re.S)
    header = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<th[^>]*>(.*?)</th>", rows[0], re.S)]
    col_doc, col_time = header.index("Document"), header.index("Run Time (s)")
    out = []
    for row in rows[1:]:
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if len(cells) == len(header) and cells[col_time]:
            out.append((cells[col_doc], float(cells[col_time])))
    return out


def test_status_page_and_execution_budget(site):
    status = site / "book" / "status.html"
    if not status.is_file():
        if REQUIRED:
            pytest.fail("book/status.md is not in the built site (add it to _toc.yml)")
        pytest.skip("no status page in the site")
    times = _run_times(status.read_text(encoding="utf-8"))
    notebooks = _book_notebooks()
    assert len(times) == len(notebooks), f"status table rows {times} vs notebooks {notebooks}"
    total = sum(t for _, t in times)
    slow = [(doc, t) for doc, t in times if t > PER_CHAPTER_BUDGET]
    assert not slow, f"chapters over {PER_CHAPTER_BUDGET:.0f} s: {slow}"
    assert total < BOOK_BUDGET, f"the book executes in {total:.0f} s (budget {BOOK_BUDGET:.0f} s)"
