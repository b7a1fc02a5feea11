/* Search results as a reader reads them: Sphinx cuts each snippet from the page's HTML, whose math is
   still TeX source there (MathJax typesets it only on the page itself). Each snippet's TeX is written
   as plain text: the delimiters dropped, the book's Greek letters and relations as their symbols. */
(function () {
  "use strict";
  var SYMBOLS = {
    varepsilon: "ε", epsilon: "ϵ", delta: "δ", Delta: "Δ", alpha: "α", beta: "β", gamma: "γ",
    theta: "θ", lambda: "λ", mu: "μ", pi: "π", rho: "ρ", sigma: "σ", tau: "τ", varphi: "φ", phi: "φ",
    psi: "ψ", omega: "ω", Omega: "Ω", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠",
    infty: "∞", in: "∈", notin: "∉", times: "×", cdot: "·", ldots: "…", dots: "…", cdots: "…",
    approx: "≈", sim: "∼", to: "→", mapsto: "↦", pm: "±", sum: "Σ", prod: "Π", int: "∫",
    mid: "|", lvert: "|", rvert: "|", lVert: "‖", rVert: "‖", quad: " ", qquad: " ", min: "min",
    max: "max", log: "log", ln: "ln", exp: "exp", sqrt: "√", subseteq: "⊆", cup: "∪", cap: "∩"
  };
  function plain(text) {
    return text
      .replace(/\\\(|\\\)|\\\[|\\\]|\$\$?/g, "")
      .replace(/\\(?:mathbb|mathrm|mathcal|operatorname|text|textbf|mathbf|boldsymbol)\s*\{([^{}]*)\}/g, "$1")
      .replace(/\\(?:frac|tfrac|dfrac)\s*\{([^{}]*)\}\s*\{([^{}]*)\}/g, "($1)/($2)")
      .replace(/\\([A-Za-z]+)/g, function (m, name) { return name in SYMBOLS ? SYMBOLS[name] : ""; })
      .replace(/\\[,;:! ]/g, " ")
      .replace(/[{}]/g, "")
      .replace(/\s+/g, " ");
  }
  function clean(root) {
    root.querySelectorAll("p.context").forEach(function (p) {
      if (p.dataset.dpbookPlain === "1") return;
      p.dataset.dpbookPlain = "1";
      var walker = document.createTreeWalker(p, NodeFilter.SHOW_TEXT);
      for (var n = walker.nextNode(); n; n = walker.nextNode()) n.textContent = plain(n.textContent);
    });
  }
  function watch() {
    var results = document.getElementById("search-results");
    if (!results) return;
    new MutationObserver(function () { clean(results); }).observe(results, {childList: true, subtree: true});
    clean(results);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", watch);
  else watch();
})();
