"""Fuzzes the hosted pages' forms, which /openapi.json does not describe (scripts/fuzz-pages).

Opens real checkout and cashier sessions through the API, reads each page as a browser would
(one of its forms, chosen at random: its action, hidden fields, CSRF token, payment methods and
promotion code field) and posts it back, either
valid with one field replaced by an odd value or with many fields odd. It follows the pages
the posts lead to (identity challenges included) and posts their forms too. Every answer must be
below 500; the run fails otherwise. Deterministic for a given seed.

Usage: fuzz_pages.py BASE_URL USER_NAME PASSWORD PROCESSOR_KEY MERCHANT_SECRET SESSIONS SEED
"""

import hashlib
import html
import random
import re
import sys
import time
from urllib.parse import urljoin

import requests

TEST_CARDS = ["4242424242424242", "4000000000000002", "4000000000009995",
              "4000002760003184", "5555555555554444"]
ODD_VALUES = ["", " ", "0", "-1", "1e309", "NaN", "9" * 40, "12/34", "13/99", "00/00", "1/1",
              "99/9999", "12345", "4242-4242-4242-4242", "4242 4242 4242 4242", "＄１２", "1,5",
              "0.001", "99999999999999999999.99", "Ünïcødé Nâme", "a" * 300, "x" * 70000,
              "\u202e\u200b", "𝔘𝔫𝔦", "'; DROP TABLE x;--", "<script>", "%00", "\t\n",
              "\u0001\u001f", "\u0000"]
# Visits of each session's pages: the first successful payment closes a page, so few.
VISITS = 4
CARD_FIELDS = {"cardNumber": "4242424242424242", "expiry": "12/34", "cvc": "123",
               "holder": "Ada Lovelace"}
# The promotion code field of a checkout: the merchant's coupon (created in main), in any
# letter case, an unknown code and a blank one.
PROMO_CODES = ["PAGES10", "pages10", "NOPE", ""]
FORM = re.compile(r'<form[^>]*action="([^"]*)"[^>]*>(.*?)</form>', re.S)


class Fuzzer:
    def __init__(self, base, seed):
        self.base = base
        self.random = random.Random(seed)
        self.statuses = {}
        self.failures = []

    def odd(self):
        if self.random.random() < 0.7:
            return self.random.choice(ODD_VALUES)
        ranges = [(32, 126), (0x80, 0x2FFF), (0xE000, 0xFFFD), (0x10000, 0x10FFFF), (0, 31)]
        chars = []
        for _ in range(self.random.randint(0, 40)):
            low, high = self.random.choice(ranges)
            chars.append(chr(self.random.randint(low, high)))
        return "".join(chars)

    def record(self, method, url, response, form=None):
        self.statuses[response.status_code] = self.statuses.get(response.status_code, 0) + 1
        if response.status_code >= 500:
            shown = {k: v[:60] for k, v in (form or {}).items()}
            self.failures.append(f"{method} {url} -> {response.status_code} {shown} "
                                 f"{response.text[:300]}")

    def page_form(self, url):
        """GETs a page; returns (action URL, fields a browser would post, radio choices, names
        of the other inputs) of one of its forms."""
        response = requests.get(url, allow_redirects=False, timeout=30)
        self.record("GET", url, response)
        forms = FORM.findall(response.text)
        if response.status_code != 200 or not forms:
            return None
        action, body = self.random.choice(forms)
        action = urljoin(url, html.unescape(action))
        hidden = {html.unescape(name): html.unescape(value) for name, value in re.findall(
            r'<input type="hidden" name="([^"]*)" value="([^"]*)"', body)}
        radios = re.findall(r'<input type="radio" name="processorId" value="([^"]*)"', body)
        inputs = set(re.findall(r'<input id="[^"]*" name="([^"]*)"', body))
        return action, hidden, radios, inputs

    def post_page(self, url, depth=0):
        found = self.page_form(url)
        if found is None:
            return
        action, form, radios, inputs = found
        if "code" in inputs:
            form["code"] = self.random.choice(PROMO_CODES)
        elif "csrfToken" in form or radios:
            form.update(CARD_FIELDS)
            form["cardNumber"] = self.random.choice(TEST_CARDS)
            form["amount"] = self.random.choice(["10", "49.90", "12,5"])
            if radios:
                form["processorId"] = self.random.choice(radios)
        form["action"] = self.random.choice(["confirm", "fail", "pay", "cancel"])
        names = list(form) + ["extra"]
        if self.random.random() < 0.6:
            form[self.random.choice(names)] = self.odd()
        else:
            for name in names:
                if self.random.random() < 0.6:
                    form[name] = self.odd()
        response = requests.post(action, data=form, allow_redirects=False, timeout=30)
        self.record("POST", action, response, form)
        location = response.headers.get("location")
        if location and depth < 2:
            target = urljoin(action, location)
            # Redirects back to the merchant's site end the visit.
            if target.startswith(self.base):
                self.post_page(target, depth + 1)


def main():
    base, user, password, processor_key, secret, sessions, seed = sys.argv[1:8]
    fuzzer = Fuzzer(base, int(seed))
    api = f"{base}/api/subscriptions/v1"
    token = requests.post(f"{api}/auth", json={"userName": user, "password": password},
                          timeout=30).json()["accessToken"]
    bearer = {"Authorization": f"Bearer {token}"}
    requests.post(f"{api}/coupons", headers=bearer, timeout=30, json={
        "code": "PAGES10", "percentOff": "10", "duration": "forever",
    }).raise_for_status()
    customer = requests.post(f"{api}/customer", headers=bearer, timeout=30, json={
        "processorKey": processor_key, "firstName": "Page", "lastName": "Fuzz",
        "email": "pages@example.com", "phone": "+4915112345678", "countryCode": "DE",
    }).json()["customerKey"]
    for number in range(int(sessions)):
        membership = requests.post(f"{api}/membership", headers=bearer, timeout=30, json={
            "customerKey": customer, "subscriptionName": "Page fuzz",
            "webhookUrl": "https://merchant.example/hooks",
            "productInfo": {"orderId": f"pages-{number}"},
            "pricingInfo": {"currency": "EUR", "totalAmount": "9.99"},
            "billingCycle": {"intervalType": "Monthly"},
            **({"trialDays": 14} if number % 3 == 2 else {}),
        }).json()["membershipKey"]
        checkout = requests.post(f"{api}/checkout/session", headers=bearer, timeout=30, json={
            "customerKey": customer, "membershipKey": membership,
            "returnToWebsiteLink": "https://merchant.example/thanks",
        }).json()["checkoutRedirectUrl"]
        timestamp = str(int(time.time()))
        email = "payer@example.com"
        signature = hashlib.sha256(f"{email};{timestamp};{secret}".encode()).hexdigest()
        cashier = requests.post(f"{base}/api/payment/hosted-page", timeout=30,
                                headers={"X-Merchant-Secret": secret}, json={
            "timestamp": timestamp, "signature": signature,
            "webhookUrl": "https://merchant.example/hooks/payments",
            "successRedirectUrl": "https://shop.example/ok",
            "failedRedirectUrl": "https://shop.example/failed",
            "billingDetails": {
                "firstName": "Ada", "lastName": "Lovelace", "email": email,
                "street": "Main Street 1", "city": "Berlin", "country": "DE",
                "zipCode": "10115", "phone": "+4915112345678", "currency": "EUR",
                **({"lockedAmount": 49.9} if number % 2 else {}),
            },
            "orderId": f"pages-cashier-{number}", "isPayOut": number % 5 == 4,
        }).json()["redirectUrl"]
        for _ in range(VISITS):
            fuzzer.post_page(checkout)
            fuzzer.post_page(cashier)
    print("answers by status:", dict(sorted(fuzzer.statuses.items())))
    for failure in fuzzer.failures:
        print("5xx:", failure, file=sys.stderr)
    sys.exit(1 if fuzzer.failures else 0)


if __name__ == "__main__":
    main()
