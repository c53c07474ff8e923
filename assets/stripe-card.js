// The hosted pages' Stripe card Element (DESIGN §17), loaded after Stripe.js. A form with
// `data-stripe-form` mounts the card Element and, on submit, has Stripe.js confirm the page's
// SetupIntent with the card (the customer's bank may ask them to authenticate), then posts only
// the SetupIntent's id: recur reads the outcome from Stripe. A form with
// `data-stripe-authenticate` lets the customer authenticate a payment with Stripe.js, then
// posts back whatever happened, for recur to read the payment from Stripe.
(function () {
  'use strict';

  function busy(form, on) {
    var button = form.querySelector('button[type=submit]');
    if (!button) return;
    if (on) {
      button.dataset.label = button.textContent;
      button.textContent = button.dataset.busyLabel || button.textContent;
    } else if (button.dataset.label) {
      button.textContent = button.dataset.label;
    }
    button.disabled = on;
  }

  var setup = document.querySelector('form[data-stripe-form]');
  if (setup) {
    var stripe = Stripe(setup.dataset.publishableKey);
    var card = stripe.elements().create('card');
    card.mount('#card-element');
    var error = setup.querySelector('[data-card-error]');
    var sending = false;
    setup.addEventListener('submit', function (event) {
      event.preventDefault();
      if (sending) return;
      sending = true;
      busy(setup, true);
      error.hidden = true;
      var holder = setup.querySelector('[name=holder]');
      var details = holder && holder.value ? { name: holder.value } : {};
      stripe.confirmCardSetup(setup.dataset.clientSecret, {
        payment_method: { card: card, billing_details: details }
      }).then(function (result) {
        if (result.error || !result.setupIntent) {
          error.textContent = (result.error && result.error.message) || error.dataset.message;
          error.hidden = false;
          sending = false;
          busy(setup, false);
          return;
        }
        setup.querySelector('[name=setupIntent]').value = result.setupIntent.id;
        setup.submit();
      });
    });
  }

  var authenticate = document.querySelector('form[data-stripe-authenticate]');
  if (authenticate) {
    var bank = Stripe(authenticate.dataset.publishableKey);
    var asked = false;
    authenticate.addEventListener('submit', function (event) {
      event.preventDefault();
      if (asked) return;
      asked = true;
      busy(authenticate, true);
      var back = function () { authenticate.submit(); };
      bank.confirmCardPayment(authenticate.dataset.clientSecret).then(back, back);
    });
  }
})();
