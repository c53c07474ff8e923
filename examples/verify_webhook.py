#!/usr/bin/env python3
"""Verifies a recur webhook delivery: the spec's Signature and the Standard Webhooks signature.

Usage: verify_webhook.py HEADERS.json BODY MERCHANT_SECRET SIGNING_SECRET
(HEADERS.json maps lower-case header names to values; BODY is the raw request body.)
Prints "valid" and exits 0, or prints "invalid" and exits 1. Standard library only.
"""
import base64
import hashlib
import hmac
import json
import sys
import time


def verify(headers: dict, body: bytes, merchant_secret: str, signing_secret: str,
           tolerance_seconds: int = 300) -> bool:
    try:
        payload = json.loads(body)
    except ValueError:
        return False
    # 1. The spec's signature: lowercase hex SHA-256 of "<merchant secret>:<OrderId>",
    #    in the X-Signature header and the payload's Signature field.
    expected = hashlib.sha256(f"{merchant_secret}:{payload['OrderId']}".encode()).hexdigest()
    if not hmac.compare_digest(expected, headers.get("x-signature", "")):
        return False
    if not hmac.compare_digest(expected, str(payload.get("Signature", ""))):
        return False
    # 2. Standard Webhooks: base64 HMAC-SHA256 over "<webhook-id>.<webhook-timestamp>.<body>",
    #    keyed with the base64-decoded part of the whsec_ signing secret. It binds the body
    #    and the time, which the spec's signature does not.
    msg_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "0")
    if abs(time.time() - int(timestamp)) > tolerance_seconds:
        return False
    key = base64.b64decode(signing_secret.removeprefix("whsec_"))
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    wanted = "v1," + base64.b64encode(mac).decode()
    return any(hmac.compare_digest(wanted, given)
               for given in headers.get("webhook-signature", "").split())


if __name__ == "__main__":
    headers_path, body_path, merchant_secret, signing_secret = sys.argv[1:5]
    with open(headers_path) as f:
        headers = json.load(f)
    with open(body_path, "rb") as f:
        body = f.read()
    ok = verify(headers, body, merchant_secret, signing_secret)
    print("valid" if ok else "invalid")
    sys.exit(0 if ok else 1)
