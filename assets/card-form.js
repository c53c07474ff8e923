// recur card forms: formats what the customer types, checks it before it is sent (the server
// checks again), and blocks a second submission while the first is on its way.
(function () {
  "use strict";

  function digits(value) { return value.replace(/\D/g, ""); }

  function luhn(number) {
    var sum = 0;
    for (var i = 0; i < number.length; i++) {
      var d = number.charCodeAt(number.length - 1 - i) - 48;
      if (i % 2 === 1) { d *= 2; if (d > 9) { d -= 9; } }
      sum += d;
    }
    return number.length > 0 && sum % 10 === 0;
  }

  function isAmex(number) { return /^3[47]/.test(number); }

  function groupCard(number) {
    var sizes = isAmex(number) ? [4, 6, 5] : [4, 4, 4, 4, 3];
    var parts = [], at = 0;
    for (var i = 0; i < sizes.length && at < number.length; i++) {
      parts.push(number.slice(at, at + sizes[i]));
      at += sizes[i];
    }
    return parts.join(" ");
  }

  function expiryValid(value, now) {
    var m = /^(\d{2})\s*\/\s*(\d{2}|\d{4})$/.exec(value.trim());
    if (!m) { return false; }
    var month = parseInt(m[1], 10);
    var year = parseInt(m[2].length === 2 ? "20" + m[2] : m[2], 10);
    if (month < 1 || month > 12) { return false; }
    return year > now.getUTCFullYear() ||
      (year === now.getUTCFullYear() && month >= now.getUTCMonth() + 1);
  }

  function setError(form, name, bad) {
    var input = form.querySelector("[name=" + name + "]");
    var message = form.querySelector("#" + name + "-error");
    if (!input || !message) { return; }
    if (bad) {
      message.textContent = message.getAttribute("data-message");
      message.hidden = false;
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", name + "-error");
    } else {
      message.hidden = true;
      input.removeAttribute("aria-invalid");
    }
  }

  function enhance(form) {
    var number = form.querySelector("[name=cardNumber]");
    var expiry = form.querySelector("[name=expiry]");
    var cvc = form.querySelector("[name=cvc]");
    var holder = form.querySelector("[name=holder]");
    var sending = false;

    number.addEventListener("input", function () {
      number.value = groupCard(digits(number.value).slice(0, 19));
    });
    expiry.addEventListener("input", function (event) {
      var d = digits(expiry.value).slice(0, 4);
      var deleting = event.inputType && event.inputType.indexOf("delete") === 0;
      expiry.value = d.length >= 3 || (d.length === 2 && !deleting) ? d.slice(0, 2) + "/" + d.slice(2) : d;
    });
    cvc.addEventListener("input", function () {
      cvc.value = digits(cvc.value).slice(0, 4);
    });

    form.addEventListener("submit", function (event) {
      if (sending) { event.preventDefault(); return; }
      if (number.matches(":disabled")) { sending = true; return; }
      var n = digits(number.value);
      var checks = {
        cardNumber: n.length >= 12 && n.length <= 19 && luhn(n),
        expiry: expiryValid(expiry.value, new Date()),
        cvc: new RegExp("^\\d{" + (isAmex(n) ? 4 : 3) + "}$").test(cvc.value),
        holder: holder.value.trim().length > 0
      };
      var first = null;
      Object.keys(checks).forEach(function (name) {
        setError(form, name, !checks[name]);
        if (!checks[name] && !first) { first = form.querySelector("[name=" + name + "]"); }
      });
      if (first) { event.preventDefault(); first.focus(); return; }
      sending = true;
      var button = form.querySelector("button[type=submit]");
      if (button) {
        button.disabled = true;
        button.textContent = button.getAttribute("data-busy-label") || button.textContent;
      }
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    Array.prototype.forEach.call(document.querySelectorAll("form[data-card-form]"), enhance);
  });
})();
