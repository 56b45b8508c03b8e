package coinkeep

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"time"
)

// Event is a webhook delivery's body; Data depends on Type.
type Event struct {
	EventID   string          `json:"event_id"`
	Type      string          `json:"type"`
	CreatedAt time.Time       `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// WebhookError says why a delivery is not to be trusted. Reason is one of "missing_header",
// "invalid_timestamp", "invalid_signature", "timestamp_outside_tolerance".
type WebhookError struct{ Reason string }

func (e *WebhookError) Error() string { return "coinkeep: webhook rejected: " + e.Reason }

// DefaultTolerance is how far X-Timestamp may be from now.
const DefaultTolerance = 300 * time.Second

var decimalSeconds = regexp.MustCompile(`^[0-9]{1,12}$`)

// SignWebhook is a delivery's X-Signature: "sha256=" + hex HMAC-SHA256(secret as given, timestamp "." body).
func SignWebhook(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(timestamp + "."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// VerifyWebhook checks a delivery over its raw body bytes (read them before any JSON decoding)
// with DefaultTolerance, and returns its event. Receivers deduplicate by EventID afterwards.
func VerifyWebhook(body []byte, header http.Header, secret string) (*Event, error) {
	return VerifyWebhookAt(body, header, secret, DefaultTolerance, time.Now())
}

// VerifyWebhookAt is VerifyWebhook with an explicit tolerance and current time.
func VerifyWebhookAt(body []byte, header http.Header, secret string, tolerance time.Duration, now time.Time) (*Event, error) {
	ts, sig := header.Get("X-Timestamp"), header.Get("X-Signature")
	if ts == "" || sig == "" {
		return nil, &WebhookError{"missing_header"}
	}
	if !decimalSeconds.MatchString(ts) {
		return nil, &WebhookError{"invalid_timestamp"}
	}
	if !hmac.Equal([]byte(SignWebhook(secret, ts, body)), []byte(sig)) {
		return nil, &WebhookError{"invalid_signature"}
	}
	sent, _ := strconv.ParseInt(ts, 10, 64)
	if d := now.Sub(time.Unix(sent, 0)); d > tolerance || d < -tolerance {
		return nil, &WebhookError{"timestamp_outside_tolerance"}
	}
	var ev Event
	if err := json.Unmarshal(body, &ev); err != nil {
		return nil, fmt.Errorf("coinkeep: webhook body: %w", err)
	}
	return &ev, nil
}
