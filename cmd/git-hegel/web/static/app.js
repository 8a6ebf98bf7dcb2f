// git hegel web: the little the pages do in the browser. Everything
// works without it; it only saves clicks. Served from the binary.
(function () {
  "use strict";
  // Filters apply as soon as a select changes.
  document.querySelectorAll("select[data-autosubmit]").forEach(function (s) {
    s.addEventListener("change", function () { s.form.submit(); });
  });
  // "Back" on an error page goes back when there is somewhere to go.
  document.querySelectorAll("a[data-back]").forEach(function (a) {
    a.addEventListener("click", function (ev) {
      if (history.length > 1) { ev.preventDefault(); history.back(); }
    });
  });
  // Refresh every 5 s while the box is ticked (remembered per browser),
  // unless a form field has the focus (someone is typing).
  var box = document.getElementById("autorefresh");
  if (!box) return;
  var key = "hegel-autorefresh";
  try { box.checked = localStorage.getItem(key) === "1"; } catch (e) {}
  box.addEventListener("change", function () {
    try { localStorage.setItem(key, box.checked ? "1" : "0"); } catch (e) {}
  });
  setInterval(function () {
    var el = document.activeElement;
    var typing = el && (el.tagName === "INPUT" && el.type !== "checkbox" || el.tagName === "TEXTAREA" || el.tagName === "SELECT");
    if (box.checked && !typing) location.reload();
  }, 5000);
})();
