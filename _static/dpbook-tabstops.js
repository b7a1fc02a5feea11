/* Keyboard stops for the regions that scroll sideways (WCAG 2.1.1; axe: scrollable-region-focusable).
 *
 * The theme gives a region a tab stop only if it overflows when the theme's script runs, on a
 * resize, or when the page's DOM changes. A code cell can start to overflow later, when the web
 * fonts arrive (a wider monospace face), or when MathJax typesets an equation; neither is a DOM
 * change the theme watches. This script repeats the same test at those moments and whenever one
 * of these regions changes size.
 */
(function () {
  "use strict";
  var REGIONS = [
    "pre",
    ".cell_output > .output",
    ".nboutput > .output_area",
    ".jp-RenderedHTMLCommon",
    ".pst-scrollable-table-container",
    ".bd-article table",
  ].join(", ");

  function overflows(el) {
    return el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1;
  }

  function mark() {
    document.querySelectorAll(REGIONS).forEach(function (el) {
      if (overflows(el)) {
        el.tabIndex = 0;
      } else if (el.getAttribute("tabindex") === "0" && el.dataset.dpbookStop === "1") {
        el.tabIndex = -1;
      }
      if (el.tabIndex === 0) {
        el.dataset.dpbookStop = "1";
      }
    });
  }

  var pending = null;
  function soon() {
    if (pending !== null) {
      window.cancelAnimationFrame(pending);
    }
    pending = window.requestAnimationFrame(function () {
      pending = null;
      mark();
    });
  }

  function start() {
    mark();
    if (document.fonts && document.fonts.ready) {
      document.fonts.ready.then(soon);
      document.fonts.addEventListener && document.fonts.addEventListener("loadingdone", soon);
    }
    window.addEventListener("load", soon);
    window.addEventListener("resize", soon);
    if ("ResizeObserver" in window) {
      var observer = new ResizeObserver(soon);
      document.querySelectorAll(REGIONS).forEach(function (el) {
        observer.observe(el);
      });
    }
    // MathJax typesets after the page loads and changes the width of the text around it
    if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
      window.MathJax.startup.promise.then(soon);
    }
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
