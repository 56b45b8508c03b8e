"""Test driver for the client, run by test/integration/clients (ava). Prints one JSON object.

  driver.py vectors REQUEST_JSON WEBHOOK_JSON    signatures and verdicts of the shared vectors
  driver.py e2e                                  webhook endpoint, invoices, pages, a typed error
  driver.py verify BODY_FILE                     verify a delivery (headers as JSON on stdin)
  driver.py retries                              the retry scenario of the ava test's fake server
  driver.py strays                               stray payments: an empty list, unknown ids
  driver.py refunds                              refunds and invoices.accept on the seeded invoices
Settings come from COINKEEP_URL, COINKEEP_KEY, COINKEEP_SECRET, SINK_URL, WEBHOOK_SECRET, and for
refunds COIN_ID, PAID_INVOICE_ID and UNDERPAID_INVOICE_ID.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import coinkeep  # noqa: E402


def error_json(e):
    if isinstance(e, coinkeep.ApiError):
        return {"class": type(e).__name__, "status": e.status, "code": e.code, "details": e.details}
    if isinstance(e, coinkeep.WebhookVerificationError):
        return {"class": type(e).__name__, "reason": e.reason}
    return {"class": type(e).__name__, "message": str(e)}


def attempt(fn):
    try:
        return {"ok": fn()}
    except coinkeep.CoinkeepError as e:
        return {"error": error_json(e)}


def client(**kw):
    return coinkeep.Client(os.environ["COINKEEP_URL"], os.environ["COINKEEP_KEY"], os.environ["COINKEEP_SECRET"], **kw)


def vectors(request_file, webhook_file):
    with open(request_file, encoding="utf-8") as f:
        req = json.load(f)
    with open(webhook_file, encoding="utf-8") as f:
        wh = json.load(f)
    out = {"requests": {}, "webhooks": {}}
    for v in req["vectors"]:
        out["requests"][v["name"]] = coinkeep.sign_request(v["secret"], v["timestamp"], v["method"], v["target"], v["body"].encode("utf-8"))
    for c in wh["cases"]:
        headers = {"x-timestamp": c["timestamp"], "X-Signature": c["signature"]}
        r = attempt(lambda: coinkeep.verify_webhook(c["body"].encode("utf-8"), headers, wh["secret"], now=int(c["timestamp"])))
        out["webhooks"][c["name"]] = "ok" in r
    # The tolerance: 300 s either way passes, 301 s fails.
    v = wh["cases"][0]
    h = {"X-Timestamp": v["timestamp"], "X-Signature": v["signature"]}
    ts = int(v["timestamp"])
    out["tolerance"] = [("ok" in attempt(lambda: coinkeep.verify_webhook(v["body"], h, wh["secret"], now=ts + d))) for d in (300, -300, 301, -301)]
    return out


def e2e():
    ck = client()
    endpoint = ck.webhook_endpoints.create(url=os.environ["SINK_URL"], event_types=["invoice.expired"], secret=os.environ["WEBHOOK_SECRET"])
    created = [ck.invoices.create(amount="10.00", currency="USD", order_id="python-%d" % i) for i in range(3)]
    read = ck.invoices.get(created[0]["id"])
    listed = [inv["id"] for inv in ck.invoices.list(limit=2)]
    missing = attempt(lambda: ck.invoices.get("00000000-0000-4000-8000-000000000000"))
    invalid = attempt(lambda: ck.invoices.create(amount="ten", currency="USD"))
    return {"endpoint_id": endpoint["id"], "created": created, "read": read, "listed": listed, "missing": missing, "invalid": invalid}


def verify(body_file):
    with open(body_file, "rb") as f:
        body = f.read()
    headers = json.load(sys.stdin)
    return attempt(lambda: coinkeep.verify_webhook(body, headers, os.environ["WEBHOOK_SECRET"]))


def retries():
    ck = client(backoff=0.05, backoff_max=0.2, max_retries=4)
    first = attempt(lambda: ck.invoices.create(amount="1", currency="USD"))
    replayed = attempt(lambda: ck.withdrawals.create(amount="1", coin_id="c", to_address="a", payout_id="p"))
    given = attempt(lambda: ck.invoices.create(idempotency_key="my-key-1", amount="2", currency="USD"))
    return {"first": first, "replayed": replayed, "given": given}


UNKNOWN = "00000000-0000-4000-8000-000000000000"


def strays():
    ck = client()
    return {
        "listed": [s["id"] for s in ck.strays.list(limit=10)],
        "missing": attempt(lambda: ck.strays.get(UNKNOWN)),
        "credit_missing": attempt(lambda: ck.strays.credit(UNKNOWN)),
        "refund_missing": attempt(lambda: ck.strays.refund(UNKNOWN)),
    }


def refunds():
    ck = client()
    paid, underpaid = os.environ["PAID_INVOICE_ID"], os.environ["UNDERPAID_INVOICE_ID"]
    unpaid = ck.invoices.create(amount="0.001", currency="BTC", coin_id=os.environ["COIN_ID"], order_id="python-unpaid")
    out = {
        "unpaid": unpaid,
        "exceeds": attempt(lambda: ck.refunds.create(invoice_id=unpaid["id"], amount="0.0001")),
        "unpaid_refunds": [r["id"] for r in ck.refunds.list(invoice_id=unpaid["id"])],
        "missing": attempt(lambda: ck.refunds.get(UNKNOWN)),
        "cancel_missing": attempt(lambda: ck.refunds.cancel(UNKNOWN)),
        "accepted": ck.invoices.accept(underpaid),
        "accept_again": attempt(lambda: ck.invoices.accept(underpaid)),
        "accept_new": attempt(lambda: ck.invoices.accept(unpaid["id"])),
    }
    params = dict(invoice_id=paid, amount="0.0002", refund_id="python-r1", comment="python client")
    out["created"] = ck.refunds.create(**params)
    out["again"] = ck.refunds.create(**params)
    out["read"] = ck.refunds.get(out["created"]["id"])
    out["listed"] = [r["id"] for r in ck.refunds.list(invoice_id=paid, limit=1)]
    out["by_refund_id"] = [r["id"] for r in ck.refunds.list(refund_id="python-r1")]
    out["cancelled"] = ck.refunds.cancel(out["created"]["id"])
    out["cancel_again"] = attempt(lambda: ck.refunds.cancel(out["created"]["id"]))
    return out


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    result = {"vectors": vectors, "e2e": e2e, "verify": verify, "retries": retries, "strays": strays, "refunds": refunds}[cmd](*args)
    print(json.dumps(result))
