//! End-to-end tests of the hosted pages in a real headless Chromium (Debian `chromium` and
//! `chromium-driver`), against the real server. Screenshots land in `<target>/screenshots/`.

#[allow(dead_code)]
#[path = "../api/harness.rs"]
mod harness;

mod chrome;
mod fixtures;
mod merchant_site;
mod stripe_fixtures;

mod cashier;
mod checkout;
mod dashboard;
mod portal_switch;
mod sepa_checkout;
mod stripe_cashier;
mod stripe_checkout;
