// recur cashier page: shows the card fields only for card processors, and, on the outcome page
// of a cashier shown inside an iframe, tells the parent page (which loads cashier.js) where the
// customer goes next. The message goes only to the merchant's origin, which the server writes
// into data-parent-origin (the origin of the session's redirect URL); without it, nothing is sent.
(function () {
  "use strict";

  function sync(form) {
    var chosen = form.querySelector("input[name=processorId]:checked");
    var card = !chosen || chosen.getAttribute("data-kind") === "card";
    var fields = form.querySelector(".card-fields");
    if (fields) { fields.hidden = !card; fields.disabled = !card; }
    var note = form.querySelector("[data-alternative-note]");
    if (note) { note.hidden = card; }
  }

  function report() {
    var outcome = document.querySelector("[data-cashier-outcome]");
    if (!outcome || window.parent === window) { return; }
    var parentOrigin = outcome.getAttribute("data-parent-origin");
    if (!parentOrigin) { return; }
    window.parent.postMessage({
      source: "recur-cashier",
      outcome: outcome.getAttribute("data-cashier-outcome"),
      orderId: outcome.getAttribute("data-order-id"),
      transactionId: outcome.getAttribute("data-transaction-id"),
      redirectUrl: outcome.getAttribute("data-redirect")
    }, parentOrigin);
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-cashier-form]"), function (form) {
      sync(form);
      form.addEventListener("change", function () { sync(form); });
    });
    report();
  });
})();
