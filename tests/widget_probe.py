"""Probe the book's views on a built page in a browser: does moving a control change the figure?

For the site test (a selenium driver on a page served offline).  Each view that
:func:`dpbook_book.widgets.show` makes is rendered by the page's widget manager as an element of class
``dpbook-view``: its controls (sliders, class ``widget-hslider``, moved with the keyboard on their
``.noUi-handle``; dropdowns, a ``<select>``) above its frames (``<img>`` with alt text inside an
ipywidgets ``Stack``; only the selected frame is displayed).  :func:`probe_views` moves each view's
first control one step and reports whether the displayed frame changed.

    from widget_probe import probe_views
    for report in probe_views(driver):
        assert report["changed"], report
"""

from __future__ import annotations

import time

#: the rendered views of a page
VIEW_SELECTOR = ".dpbook-view"

_STATE_JS = """
const views = [...document.querySelectorAll(arguments[0])];
return views.map((v) => {
  const shown = [...v.querySelectorAll('img')].filter((i) => i.offsetParent !== null);
  const controls = [...v.querySelectorAll('.widget-hslider, .widget-dropdown')].map((c) => ({
    kind: c.classList.contains('widget-hslider') ? 'slider' : 'dropdown',
    label: (c.querySelector('.widget-label') || {}).textContent || '',
    readout: ((c.querySelector('.widget-readout') || c.querySelector('select') || {}).textContent || '').trim(),
    value: (c.querySelector('select') || {}).value,
    track: (() => { const t = c.querySelector('.noUi-target, .slider-container');
                    return t ? t.getBoundingClientRect().width : 0; })(),
  }));
  return {
    figure: (v.closest('figure') || {}).id || null,
    images: v.querySelectorAll('img').length,  // the Stack puts only the selected frame in the page
    shown: shown.map((i) => ({alt: i.alt, src: i.src.length + ':' + i.src.slice(-40),
                              width: i.getBoundingClientRect().width})),
    controls,
  };
});
"""


def view_states(driver):
    """What each view on the current page shows: its figure's id, the displayed frame (alt text, size of
    its ``src``, width on screen) and its controls (kind, label, readout, width of a slider's track)."""
    return driver.execute_script(_STATE_JS, VIEW_SELECTOR)


def move_control(driver, view_index, control_index=0):
    """Move a view's control one step: a slider's handle by the arrow key (right, or left at its
    end), a dropdown to its next option (or the first).  Returns what was done."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    view = driver.find_elements(By.CSS_SELECTOR, VIEW_SELECTOR)[view_index]
    controls = view.find_elements(By.CSS_SELECTOR, ".widget-hslider, .widget-dropdown")
    control = controls[control_index]
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", control)
    if "widget-dropdown" in control.get_attribute("class"):
        select = Select(control.find_element(By.TAG_NAME, "select"))
        n = len(select.options)
        i = [o.get_attribute("value") for o in select.options].index(
            select.first_selected_option.get_attribute("value")
        )
        select.select_by_index((i + 1) % n)
        return f"dropdown -> option {(i + 1) % n}"
    handle = control.find_element(By.CSS_SELECTOR, ".noUi-handle")
    now, top = (
        handle.get_attribute("aria-valuenow"),
        handle.get_attribute("aria-valuemax"),
    )
    key = Keys.ARROW_LEFT if now is not None and now == top else Keys.ARROW_RIGHT
    handle.send_keys(key)
    return "slider " + ("left" if key == Keys.ARROW_LEFT else "right")


def probe_views(driver, settle=0.5):
    """Move each view's first control on the current page; return, per view, what was displayed before
    and after and whether it changed (``changed``: a different frame is displayed)."""
    reports = []
    for i, before in enumerate(view_states(driver)):
        report = {"figure": before["figure"], "before": before["shown"]}
        if not before["controls"]:
            report.update(moved=None, after=before["shown"], changed=None)
            reports.append(report)
            continue
        report["moved"] = move_control(driver, i)
        deadline = time.monotonic() + 5.0
        while True:
            after = view_states(driver)[i]["shown"]
            if after != before["shown"] or time.monotonic() > deadline:
                break
            time.sleep(settle)
        report.update(
            after=after, changed=(len(after) == 1 and after != before["shown"])
        )
        reports.append(report)
    return reports
