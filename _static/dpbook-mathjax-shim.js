/* The widget manager typesets widget labels through MathJax 2's `MathJax.Hub.Queue`; the book loads
   MathJax 3, which has no `Hub`. This shim forwards those calls to MathJax 3. */
(function () {
  "use strict";
  function typeset(cmd) {
    var mj = window.MathJax, el = cmd && cmd[2];
    if (!mj || !mj.startup || !mj.startup.promise) return;
    mj.startup.promise.then(function () {
      return mj.typesetPromise ? mj.typesetPromise(el ? [el] : undefined) : null;
    });
  }
  function install() {
    if (window.MathJax && !window.MathJax.Hub) window.MathJax.Hub = {Queue: typeset};
  }
  install();
  document.addEventListener("DOMContentLoaded", install);
})();
