// recur cashier.js: lets a merchant page host the recur cashier in an iframe.
//
//   <head><script src="{cdn}/cashier.js"></script></head>
//   <body><iframe src="{redirectUrl from POST /api/payment/hosted-page}"></iframe></body>
//
// When a payment ends, the cashier posts {source: "recur-cashier", outcome, orderId,
// transactionId, redirectUrl} to this page, if this page is on the origin of the session's
// successRedirectUrl / failedRedirectUrl (it posts to no other origin). The script accepts it only from one of this page's
// iframes and only from that iframe's own origin, dispatches a cancelable "recur:cashier" event on
// window (event.detail is the message), and unless a listener called preventDefault() sends the
// top window to the session's successRedirectUrl or failedRedirectUrl.
(function () {
  "use strict";

  function frameOf(source) {
    var frames = document.getElementsByTagName("iframe");
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === source) { return frames[i]; }
    }
    return null;
  }

  window.addEventListener("message", function (event) {
    var data = event.data;
    if (!data || data.source !== "recur-cashier") { return; }
    var frame = frameOf(event.source);
    if (!frame) { return; }
    var origin;
    try { origin = new URL(frame.src, window.location.href).origin; } catch (e) { return; }
    if (origin !== event.origin) { return; }
    var notice = new CustomEvent("recur:cashier", { detail: data, cancelable: true });
    if (!window.dispatchEvent(notice)) { return; }
    var target = data.redirectUrl;
    if (typeof target !== "string" || !/^https?:\/\//i.test(target)) { return; }
    try {
      window.top.location.href = target;
    } catch (e) {
      window.location.href = target;
    }
  });
})();
