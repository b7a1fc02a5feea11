/* Inline math wider than its line on a narrow screen (MathJax 3 does not break inline formulas):
   that formula alone becomes a box that scrolls sideways, with a keyboard stop, instead of running
   past the column where a box would cut it off. Checked after MathJax typesets and on every resize. */
(function () {
  "use strict";
  function fit() {
    document.querySelectorAll('mjx-container:not([display="true"])').forEach(function (el) {
      var parent = el.parentElement;
      if (!parent) return;
      el.classList.remove("dpbook-wide-math");
      if (el.getBoundingClientRect().width > parent.clientWidth + 1) {
        el.classList.add("dpbook-wide-math");
        el.tabIndex = 0;
      } else if (el.getAttribute("tabindex") === "0") {
        el.removeAttribute("tabindex");
      }
    });
  }
  var pending = false;
  function later() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; fit(); });
  }
  window.addEventListener("resize", later);
  window.addEventListener("load", function () {
    var mj = window.MathJax;
    if (mj && mj.startup && mj.startup.promise) mj.startup.promise.then(later);
    later();
  });
})();
