/* The views' sliders, for screen readers: the widget manager draws a slider's handle as a
   role="slider" element with no accessible name (the label beside it is not tied to it), and its
   aria-valuenow is the frame's index, not the value the reader sees. Each handle is named after its
   control's label and says the value shown in its readout (aria-valuetext), kept up to date. */
(function () {
  "use strict";
  function sync(slider) {
    var handle = slider.querySelector(".noUi-handle");
    if (!handle) return;
    var label = slider.querySelector(".widget-label");
    var readout = slider.querySelector(".widget-readout");
    var name = label ? label.textContent.trim() : "";
    if (name && handle.getAttribute("aria-label") !== name) handle.setAttribute("aria-label", name);
    var value = readout ? (readout.value !== undefined && readout.tagName === "INPUT" ? readout.value
                                                                                  : readout.textContent).trim() : "";
    var text = name && value ? name + " = " + value : value;
    if (text && handle.getAttribute("aria-valuetext") !== text) handle.setAttribute("aria-valuetext", text);
  }
  function all() {
    document.querySelectorAll(".widget-slider").forEach(sync);
  }
  new MutationObserver(all).observe(document.documentElement,
                                    {childList: true, subtree: true, characterData: true});
  document.addEventListener("DOMContentLoaded", all);
  all();
})();
