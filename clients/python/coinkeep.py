"""Coinkeep API client for Python 3.8+, on the standard library only.

    from coinkeep import Client, verify_webhook

    ck = Client("https://pay.example.com", key_id, secret)
    invoice = ck.invoices.create(amount="25.00", currency="USD", order_id="A-1001")
    for inv in ck.invoices.list(status="paid"):
        print(inv["id"], inv["paid_amount"])

Every request is signed (SPEC "Canonical string"), every POST carries an Idempotency-Key that is
kept across retries, and network errors, 409 idempotency.in_progress, 429 and 5xx are retried with
exponential backoff and jitter. Errors are raised as ApiError (and subclasses) with `code` and
`details` from the error envelope.
"""
import hashlib
import hmac
import json
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from http.client import HTTPException

__all__ = [
    "Client", "CoinkeepError", "ApiError", "AuthenticationError", "PermissionDeniedError", "NotFoundError",
    "ConflictError", "InvalidRequestError", "RateLimitError", "ServerError", "NetworkError",
    "WebhookVerificationError", "sign_request", "sign_webhook", "verify_webhook",
]
__version__ = "0.1.0"


class CoinkeepError(Exception):
    """Base class of every error this module raises."""


class ApiError(CoinkeepError):
    """An error answer of the API: `status`, `code` (branch on it), `message` and `details`."""

    def __init__(self, status, code, message, details=None, headers=None):
        super().__init__("%s %s: %s" % (status, code, message))
        self.status = status
        self.code = code
        self.message = message
        self.details = details or {}
        self.headers = headers or {}


class InvalidRequestError(ApiError):  # 400, 413, 422
    pass


class AuthenticationError(ApiError):  # 401
    pass


class PermissionDeniedError(ApiError):  # 403
    pass


class NotFoundError(ApiError):  # 404
    pass


class ConflictError(ApiError):  # 409
    pass


class RateLimitError(ApiError):  # 429
    pass


class ServerError(ApiError):  # 5xx
    pass


class NetworkError(CoinkeepError):
    """No answer: the connection failed or timed out on every attempt."""


class WebhookVerificationError(CoinkeepError):
    """A delivery that is not to be trusted; `reason` is missing_header, invalid_timestamp,
    invalid_signature or timestamp_outside_tolerance."""

    def __init__(self, reason, message):
        super().__init__(message)
        self.reason = reason


_BY_STATUS = {400: InvalidRequestError, 401: AuthenticationError, 403: PermissionDeniedError, 404: NotFoundError,
              409: ConflictError, 413: InvalidRequestError, 422: InvalidRequestError, 429: RateLimitError}


def _bytes(b):
    return b.encode("utf-8") if isinstance(b, str) else bytes(b)


def sign_request(secret, timestamp, method, target, body=b""):
    """X-Signature: hex HMAC-SHA256(secret as given, timestamp LF METHOD LF target LF hex sha256(body))."""
    canonical = "%s\n%s\n%s\n%s" % (timestamp, method.upper(), target, hashlib.sha256(_bytes(body)).hexdigest())
    return hmac.new(_bytes(secret), canonical.encode("utf-8"), hashlib.sha256).hexdigest()


def sign_webhook(secret, timestamp, raw_body):
    """X-Signature of a delivery: "sha256=" + hex HMAC-SHA256(secret as given, timestamp "." raw body)."""
    mac = hmac.new(_bytes(secret), ("%s." % timestamp).encode("utf-8") + _bytes(raw_body), hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def _header(headers, name):
    """A header from a dict of any capitalisation, a list of pairs or a WSGI environ (HTTP_X_...)."""
    environ = "HTTP_" + name.upper().replace("-", "_")
    for k, v in (headers.items() if hasattr(headers, "items") else headers):
        if k.lower() == name.lower() or k == environ:
            return v
    return None


def verify_webhook(raw_body, headers, secret, tolerance=300, now=None):
    """Checks a delivery over its raw body bytes and returns the event (a dict with event_id, type,
    created_at, data). Raises WebhookVerificationError otherwise. Deduplicate by event_id after."""
    timestamp, signature = _header(headers, "X-Timestamp"), _header(headers, "X-Signature")
    if timestamp is None or signature is None:
        raise WebhookVerificationError("missing_header", "X-Timestamp and X-Signature are required")
    if not re.fullmatch(r"[0-9]{1,12}", timestamp):
        raise WebhookVerificationError("invalid_timestamp", "X-Timestamp must be decimal Unix seconds")
    expected = sign_webhook(secret, timestamp, raw_body)
    if not hmac.compare_digest(expected.encode("utf-8"), signature.encode("utf-8")):
        raise WebhookVerificationError("invalid_signature", "the signature does not match the body, timestamp and secret")
    if abs((time.time() if now is None else now) - int(timestamp)) > tolerance:
        raise WebhookVerificationError("timestamp_outside_tolerance", "X-Timestamp is more than %d s from now" % tolerance)
    return json.loads(_bytes(raw_body).decode("utf-8"))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):  # a signed request is never sent on elsewhere
        return None


class _Resource:
    def __init__(self, client, path):
        self._client, self._path = client, path

    def _url(self, *parts):
        return "/".join([self._path] + [urllib.parse.quote(str(p), safe="") for p in parts])

    def create(self, idempotency_key=None, **fields):
        return self._client.request("POST", self._path, body=fields, idempotency_key=idempotency_key)

    def get(self, id):
        return self._client.request("GET", self._url(id))

    def list(self, **filters):
        """Every item of the list, page after page (limit= sets the page size)."""
        return self._client.paginate(self._path, filters)

    def _action(self, id, action, idempotency_key=None, **fields):
        return self._client.request("POST", self._url(id, action), body=fields, idempotency_key=idempotency_key)


class _Invoices(_Resource):
    def cancel(self, id, idempotency_key=None):
        return self._action(id, "cancel", idempotency_key)

    def accept(self, id, idempotency_key=None):
        """Accepts an underpaid invoice as paid (status paid, resolution accepted_underpayment);
        any other status raises ConflictError with details["reason"] == "invoice_not_underpaid"."""
        return self._action(id, "accept", idempotency_key)


class _Addresses(_Resource):
    def archive(self, id, idempotency_key=None):
        return self._action(id, "archive", idempotency_key)

    def restore(self, id, idempotency_key=None):
        return self._action(id, "restore", idempotency_key)


class _Withdrawals(_Resource):
    def estimate(self, **fields):
        return self._client.request("POST", self._path + "/estimate", body=fields)

    def cancel(self, id, idempotency_key=None):
        return self._action(id, "cancel", idempotency_key)


class _Refunds(_Resource):
    """Refunds (create: invoice_id or transaction_id, amount as a decimal, "all" or "excess",
    optional to_address, refund_id, network_fee_paid_by, comment). Without to_address the refund
    waits in awaiting_address with a refund_url for the payer."""

    def cancel(self, id, idempotency_key=None):
        return self._action(id, "cancel", idempotency_key)


class _Strays(_Resource):
    """Stray payments: coins sent on another network or in another coin than asked (list, get)."""

    def credit(self, id, idempotency_key=None):
        """Credits an open, confirmed stray to the balance as a deposit, once (ConflictError after)."""
        return self._action(id, "credit", idempotency_key)

    def refund(self, id, idempotency_key=None):
        return self._action(id, "refund", idempotency_key)


class _Endpoints(_Resource):
    def update(self, id, **fields):
        return self._client.request("PATCH", self._url(id), body=fields)

    def delete(self, id):
        return self._client.request("DELETE", self._url(id))

    def rotate_secret(self, id, idempotency_key=None):
        return self._action(id, "rotate-secret", idempotency_key)


class _Deliveries(_Resource):
    def retry(self, id, idempotency_key=None):
        return self._action(id, "retry", idempotency_key)


class Client:
    """A signed API client. `max_retries` extra attempts follow a retryable failure, waiting
    min(backoff_max, backoff * 2**n) seconds with jitter, or the Retry-After of a 429."""

    def __init__(self, base_url, key_id, secret, timeout=30.0, max_retries=3, backoff=0.5, backoff_max=8.0, sleep=time.sleep):
        self.base_url = base_url.rstrip("/")
        self.key_id, self._secret = key_id, secret
        self.timeout, self.max_retries, self.backoff, self.backoff_max = timeout, max_retries, backoff, backoff_max
        self._sleep = sleep
        self._opener = urllib.request.build_opener(_NoRedirect)
        self._lock = threading.Lock()
        self._used = {}
        self.invoices = _Invoices(self, "/v1/invoices")
        self.addresses = _Addresses(self, "/v1/addresses")
        self.transactions = _Resource(self, "/v1/transactions")
        self.withdrawals = _Withdrawals(self, "/v1/withdrawals")
        self.refunds = _Refunds(self, "/v1/refunds")
        self.strays = _Strays(self, "/v1/strays")
        self.webhook_endpoints = _Endpoints(self, "/v1/webhooks/endpoints")
        self.webhook_deliveries = _Deliveries(self, "/v1/webhooks/deliveries")

    def balances(self, **query):
        return self.paginate("/v1/balances", query)

    def currencies(self):
        return self.request("GET", "/v1/currencies")

    def fiat_currencies(self):
        return self.request("GET", "/v1/fiat-currencies")

    def rates(self, fiat):
        return self.request("GET", "/v1/rates", query={"fiat": fiat})

    def paginate(self, path, query=None):
        """Yields the items of a keyset-paged list, following next_cursor to the last page."""
        query = dict(query or {})
        while True:
            page = self.request("GET", path, query=query)
            for item in page["items"]:
                yield item
            if not page.get("next_cursor"):
                return
            query["cursor"] = page["next_cursor"]

    def request(self, method, path, body=None, query=None, idempotency_key=None):
        """One API call with its retries; returns the decoded JSON answer (None when empty)."""
        method = method.upper()
        target = path
        pairs = [(k, _qs(v)) for k, v in (query or {}).items() if v is not None]
        if pairs:
            target += "?" + urllib.parse.urlencode(pairs)
        data = b"" if body is None else json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
        headers = {"X-API-Key": self.key_id, "Accept": "application/json", "User-Agent": "coinkeep-python/" + __version__}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if method == "POST":
            headers["Idempotency-Key"] = idempotency_key or str(uuid.uuid4())
        attempt = 0
        while True:
            headers["X-Timestamp"], headers["X-Signature"] = self._sign(method, target, data)
            req = urllib.request.Request(self.base_url + target, data=data if body is not None else None, headers=headers, method=method)
            try:
                with self._opener.open(req, timeout=self.timeout) as res:
                    return _decode(res.read())
            except urllib.error.HTTPError as e:
                err = _api_error(e.code, e.read(), e.headers)
                if attempt >= self.max_retries or not _retryable(err):
                    raise err from None
                wait = _retry_after(err)
            except (urllib.error.URLError, HTTPException, OSError) as e:
                if attempt >= self.max_retries:
                    raise NetworkError("%s %s: %s" % (method, path, getattr(e, "reason", e))) from e
                wait = None
            delay = min(self.backoff_max, self.backoff * 2 ** attempt)
            self._sleep(wait + random.uniform(0, self.backoff) if wait is not None else random.uniform(delay / 2, delay))
            attempt += 1

    def _sign(self, method, target, data):
        """A timestamp and signature this client has not used: the server accepts a signature once,
        so an identical request in the same second is stamped a second later (never earlier)."""
        with self._lock:
            ts = int(time.time())
            self._used = {sig: t for sig, t in self._used.items() if t >= ts}
            while True:
                sig = sign_request(self._secret, ts, method, target, data)
                if sig not in self._used:
                    self._used[sig] = ts
                    return str(ts), sig
                ts += 1


def _qs(v):
    return ("true" if v else "false") if isinstance(v, bool) else str(v)


def _decode(raw):
    return json.loads(raw.decode("utf-8")) if raw else None


def _api_error(status, raw, headers):
    try:
        env = json.loads(raw.decode("utf-8"))["error"]
        code, message, details = env["code"], env.get("message", ""), env.get("details") or {}
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        code, message, details = "http_%d" % status, raw[:200].decode("utf-8", "replace"), {}
    cls = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    return cls(status, code, message, details, dict(headers.items()) if headers else {})


def _retryable(err):
    if err.status == 409:
        return err.code == "idempotency.in_progress"
    if err.status >= 500:  # a replayed 5xx stays what it was: look the object up instead
        return (_header(err.headers, "Idempotent-Replayed") or "").lower() != "true"
    return err.status == 429


def _retry_after(err):
    value = _header(err.headers, "Retry-After") or err.details.get("retry_after")
    try:
        return max(0.0, float(value)) if err.status == 429 and value is not None else None
    except (TypeError, ValueError):
        return None
