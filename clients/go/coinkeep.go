// Package coinkeep is a client for the Coinkeep payment API, on the standard library only.
//
//	ck := coinkeep.New("https://pay.example.com", keyID, secret)
//	inv, err := ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "25.00", Currency: "USD"})
//	it := ck.Invoices.List(ctx, url.Values{"status": {"paid"}})
//	for it.Next() {
//		fmt.Println(it.Current().ID)
//	}
//	if err := it.Err(); err != nil { ... }
//
// Every request is signed (SPEC "Canonical string"), every POST carries an Idempotency-Key kept
// across retries, and network errors, 409 idempotency.in_progress, 429 and 5xx are retried with
// exponential backoff and jitter. API errors are *APIError values carrying Code and Details.
package coinkeep

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Version of this library (independent of the API version).
const Version = "0.1.0"

// Object is a resource this package does not type: decoded JSON.
type Object = map[string]any

// APIError is an error answer of the API: branch on Code.
type APIError struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	Header  http.Header
}

func (e *APIError) Error() string {
	return fmt.Sprintf("coinkeep: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is an *APIError with the given code (e.g. "not_found").
func IsCode(err error, code string) bool {
	var e *APIError
	return errors.As(err, &e) && e.Code == code
}

// Client is a signed API client, safe for concurrent use.
type Client struct {
	BaseURL    string
	KeyID      string
	HTTPClient *http.Client
	MaxRetries int           // extra attempts after a retryable failure (default 3)
	Backoff    time.Duration // first backoff (default 500 ms), doubling up to BackoffMax (default 8 s)
	BackoffMax time.Duration

	secret string
	mu     sync.Mutex
	used   map[string]int64

	Invoices          *Invoices
	Addresses         *Resource
	Transactions      *Resource
	Withdrawals       *Resource
	Refunds           *Resource // Action(ctx, id, "cancel", nil)
	Strays            *Resource // Action(ctx, id, "credit" or "refund", nil)
	WebhookEndpoints  *Resource
	WebhookDeliveries *Resource
}

// New returns a client for the API at baseURL (scheme, host and any prefix before /v1).
func New(baseURL, keyID, secret string) *Client {
	c := &Client{
		BaseURL: strings.TrimRight(baseURL, "/"), KeyID: keyID, secret: secret, used: map[string]int64{},
		MaxRetries: 3, Backoff: 500 * time.Millisecond, BackoffMax: 8 * time.Second,
		// A signed request is never sent on to another address.
		HTTPClient: &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
	}
	c.Invoices = &Invoices{Resource{c, "/v1/invoices"}}
	c.Addresses = &Resource{c, "/v1/addresses"}
	c.Transactions = &Resource{c, "/v1/transactions"}
	c.Withdrawals = &Resource{c, "/v1/withdrawals"}
	c.Refunds = &Resource{c, "/v1/refunds"}
	c.Strays = &Resource{c, "/v1/strays"}
	c.WebhookEndpoints = &Resource{c, "/v1/webhooks/endpoints"}
	c.WebhookDeliveries = &Resource{c, "/v1/webhooks/deliveries"}
	return c
}

// SignRequest is X-Signature: hex HMAC-SHA256(secret as given, timestamp LF METHOD LF target LF hex sha256(body)).
func SignRequest(secret, timestamp, method, target string, body []byte) string {
	sum := sha256.Sum256(body)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "\n" + strings.ToUpper(method) + "\n" + target + "\n" + hex.EncodeToString(sum[:])))
	return hex.EncodeToString(mac.Sum(nil))
}

// RequestOption changes one call.
type RequestOption func(*http.Request)

// WithIdempotencyKey sends key instead of a generated one (POST only).
func WithIdempotencyKey(key string) RequestOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// Do sends one API call with its retries and decodes the JSON answer into out (when not nil).
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any, opts ...RequestOption) error {
	method = strings.ToUpper(method)
	target := path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	var data []byte
	if body != nil {
		var err error
		if data, err = json.Marshal(body); err != nil {
			return err
		}
	}
	idemKey := ""
	if method == http.MethodPost {
		idemKey = newKey()
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, c.BaseURL+target, bytes.NewReader(data))
		if err != nil {
			return err
		}
		req.Header.Set("X-API-Key", c.KeyID)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", "coinkeep-go/"+Version)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Body, req.ContentLength = http.NoBody, 0
		}
		if idemKey != "" {
			req.Header.Set("Idempotency-Key", idemKey)
		}
		for _, o := range opts {
			o(req)
		}
		idemKey = req.Header.Get("Idempotency-Key") // a given key is kept across retries too
		ts, sig := c.sign(method, req.URL.RequestURI(), data)
		req.Header.Set("X-Timestamp", ts)
		req.Header.Set("X-Signature", sig)

		var wait time.Duration = -1
		res, err := c.HTTPClient.Do(req)
		if err == nil {
			raw, rerr := io.ReadAll(res.Body)
			res.Body.Close()
			if rerr == nil && res.StatusCode < 300 {
				if out == nil || len(raw) == 0 {
					return nil
				}
				return json.Unmarshal(raw, out)
			}
			if rerr == nil {
				apiErr := decodeError(res, raw)
				if attempt >= c.MaxRetries || !retryable(apiErr) {
					return apiErr
				}
				wait = retryAfter(apiErr)
			}
			err = rerr
		}
		if err != nil {
			if ctx.Err() != nil || attempt >= c.MaxRetries {
				return fmt.Errorf("coinkeep: %s %s: %w", method, path, err)
			}
		}
		if err := sleep(ctx, c.delay(attempt, wait)); err != nil {
			return err
		}
	}
}

func (c *Client) delay(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter >= 0 {
		return retryAfter + time.Duration(mrand.Int63n(int64(c.Backoff)+1))
	}
	d := c.Backoff << attempt
	if d > c.BackoffMax || d <= 0 {
		d = c.BackoffMax
	}
	return d/2 + time.Duration(mrand.Int63n(int64(d/2)+1))
}

// sign returns a timestamp and signature this client has not used: the server accepts a signature
// once, so an identical request in the same second is stamped a second later (never earlier).
func (c *Client) sign(method, target string, data []byte) (string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now().Unix()
	for s, t := range c.used {
		if t < now {
			delete(c.used, s)
		}
	}
	for ts := now; ; ts++ {
		sig := SignRequest(c.secret, strconv.FormatInt(ts, 10), method, target, data)
		if _, seen := c.used[sig]; !seen {
			c.used[sig] = ts
			return strconv.FormatInt(ts, 10), sig
		}
	}
}

func decodeError(res *http.Response, raw []byte) *APIError {
	var env struct {
		Error struct {
			Code    string         `json:"code"`
			Message string         `json:"message"`
			Details map[string]any `json:"details"`
		} `json:"error"`
	}
	e := &APIError{Status: res.StatusCode, Header: res.Header}
	if json.Unmarshal(raw, &env) == nil && env.Error.Code != "" {
		e.Code, e.Message, e.Details = env.Error.Code, env.Error.Message, env.Error.Details
	} else {
		e.Code, e.Message = fmt.Sprintf("http_%d", res.StatusCode), string(raw[:min(len(raw), 200)])
	}
	if e.Details == nil {
		e.Details = map[string]any{}
	}
	return e
}

func retryable(e *APIError) bool {
	switch {
	case e.Status == http.StatusConflict:
		return e.Code == "idempotency.in_progress"
	case e.Status >= 500: // a replayed 5xx stays what it was: look the object up instead
		return !strings.EqualFold(e.Header.Get("Idempotent-Replayed"), "true")
	}
	return e.Status == http.StatusTooManyRequests
}

func retryAfter(e *APIError) time.Duration {
	if e.Status != http.StatusTooManyRequests {
		return -1
	}
	if s, err := strconv.ParseFloat(e.Header.Get("Retry-After"), 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if s, ok := e.Details["retry_after"].(float64); ok && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	return -1
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func newKey() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}
