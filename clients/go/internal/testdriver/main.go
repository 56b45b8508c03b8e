// Command testdriver is run by the repository's ava tests (test/integration/clients); it prints
// one JSON object. Subcommands: vectors REQUEST_JSON WEBHOOK_JSON, e2e, verify BODY_FILE (headers
// as JSON on stdin), retries, strays, refunds. Settings come from COINKEEP_URL, COINKEEP_KEY,
// COINKEEP_SECRET, SINK_URL and WEBHOOK_SECRET, and for refunds COIN_ID, PAID_INVOICE_ID and
// UNDERPAID_INVOICE_ID.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"coinkeep"
)

type result map[string]any

func errorJSON(err error) result {
	var api *coinkeep.APIError
	var wh *coinkeep.WebhookError
	switch {
	case errors.As(err, &api):
		return result{"class": "APIError", "status": api.Status, "code": api.Code, "details": api.Details}
	case errors.As(err, &wh):
		return result{"class": "WebhookError", "reason": wh.Reason}
	}
	return result{"class": "error", "message": err.Error()}
}

func attempt(v any, err error) result {
	if err != nil {
		return result{"error": errorJSON(err)}
	}
	return result{"ok": v}
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func readJSON(file string, v any) {
	raw, err := os.ReadFile(file)
	must(err)
	must(json.Unmarshal(raw, v))
}

func client() *coinkeep.Client {
	return coinkeep.New(os.Getenv("COINKEEP_URL"), os.Getenv("COINKEEP_KEY"), os.Getenv("COINKEEP_SECRET"))
}

func vectors(requestFile, webhookFile string) result {
	var req struct {
		Vectors []struct{ Name, Secret, Method, Target, Timestamp, Body string }
	}
	var wh struct {
		Secret string
		Cases  []struct{ Name, Timestamp, Body, Signature string }
	}
	readJSON(requestFile, &req)
	readJSON(webhookFile, &wh)
	requests, webhooks := result{}, result{}
	for _, v := range req.Vectors {
		requests[v.Name] = coinkeep.SignRequest(v.Secret, v.Timestamp, v.Method, v.Target, []byte(v.Body))
	}
	verify := func(body, ts, sig string, now int64) bool {
		h := http.Header{}
		h.Set("X-Timestamp", ts)
		h.Set("X-Signature", sig)
		_, err := coinkeep.VerifyWebhookAt([]byte(body), h, wh.Secret, coinkeep.DefaultTolerance, time.Unix(now, 0))
		return err == nil
	}
	for _, c := range wh.Cases {
		ts, _ := strconv.ParseInt(c.Timestamp, 10, 64)
		webhooks[c.Name] = verify(c.Body, c.Timestamp, c.Signature, ts)
	}
	c := wh.Cases[0]
	ts, _ := strconv.ParseInt(c.Timestamp, 10, 64)
	tolerance := []bool{}
	for _, d := range []int64{300, -300, 301, -301} {
		tolerance = append(tolerance, verify(c.Body, c.Timestamp, c.Signature, ts+d))
	}
	return result{"requests": requests, "webhooks": webhooks, "tolerance": tolerance}
}

func e2e(ctx context.Context) result {
	ck := client()
	endpoint, err := ck.WebhookEndpoints.Create(ctx, map[string]any{"url": os.Getenv("SINK_URL"), "event_types": []string{"invoice.expired"}, "secret": os.Getenv("WEBHOOK_SECRET")})
	must(err)
	created := []*coinkeep.Invoice{}
	for i := 0; i < 3; i++ {
		inv, err := ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "10.00", Currency: "USD", OrderID: fmt.Sprintf("go-%d", i)})
		must(err)
		created = append(created, inv)
	}
	read, err := ck.Invoices.Get(ctx, created[0].ID)
	must(err)
	listed := []string{}
	it := ck.Invoices.List(ctx, url.Values{"limit": {"2"}})
	for it.Next() {
		listed = append(listed, it.Current().ID)
	}
	must(it.Err())
	missing := attempt(ck.Invoices.Get(ctx, "00000000-0000-4000-8000-000000000000"))
	invalid := attempt(ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "ten", Currency: "USD"}))
	return result{"endpoint_id": endpoint["id"], "created": created, "read": read, "listed": listed, "missing": missing, "invalid": invalid}
}

func verify(bodyFile string) result {
	body, err := os.ReadFile(bodyFile)
	must(err)
	var headers map[string]string
	must(json.NewDecoder(os.Stdin).Decode(&headers))
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	return attempt(coinkeep.VerifyWebhook(body, h, os.Getenv("WEBHOOK_SECRET")))
}

func retries(ctx context.Context) result {
	ck := client()
	ck.MaxRetries, ck.Backoff, ck.BackoffMax = 4, 50*time.Millisecond, 200*time.Millisecond
	first := attempt(ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "1", Currency: "USD"}))
	replayed := attempt(ck.Withdrawals.Create(ctx, map[string]string{"amount": "1", "coin_id": "c", "to_address": "a", "payout_id": "p"}))
	given := attempt(ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "2", Currency: "USD"}, coinkeep.WithIdempotencyKey("my-key-1")))
	return result{"first": first, "replayed": replayed, "given": given}
}

const unknownID = "00000000-0000-4000-8000-000000000000"

// ids walks a list to its end and returns the items' ids.
func ids(it *coinkeep.Iter[coinkeep.Object]) []any {
	out := []any{}
	for it.Next() {
		out = append(out, it.Current()["id"])
	}
	must(it.Err())
	return out
}

func strays(ctx context.Context) result {
	ck := client()
	return result{
		"listed":         ids(ck.Strays.List(ctx, url.Values{"limit": {"10"}})),
		"missing":        attempt(ck.Strays.Get(ctx, unknownID)),
		"credit_missing": attempt(ck.Strays.Action(ctx, unknownID, "credit", nil)),
		"refund_missing": attempt(ck.Strays.Action(ctx, unknownID, "refund", nil)),
	}
}

func refunds(ctx context.Context) result {
	ck := client()
	paid, underpaid := os.Getenv("PAID_INVOICE_ID"), os.Getenv("UNDERPAID_INVOICE_ID")
	unpaid, err := ck.Invoices.Create(ctx, coinkeep.InvoiceParams{Amount: "0.001", Currency: "BTC", CoinID: os.Getenv("COIN_ID"), OrderID: "go-unpaid"})
	must(err)
	out := result{"unpaid": unpaid}
	out["exceeds"] = attempt(ck.Refunds.Create(ctx, map[string]any{"invoice_id": unpaid.ID, "amount": "0.0001"}))
	out["unpaid_refunds"] = ids(ck.Refunds.List(ctx, url.Values{"invoice_id": {unpaid.ID}}))
	out["missing"] = attempt(ck.Refunds.Get(ctx, unknownID))
	out["cancel_missing"] = attempt(ck.Refunds.Action(ctx, unknownID, "cancel", nil))
	accepted, err := ck.Invoices.Accept(ctx, underpaid)
	must(err)
	out["accepted"] = accepted
	out["accept_again"] = attempt(ck.Invoices.Accept(ctx, underpaid))
	out["accept_new"] = attempt(ck.Invoices.Accept(ctx, unpaid.ID))
	params := map[string]any{"invoice_id": paid, "amount": "0.0002", "refund_id": "go-r1", "comment": "go client"}
	created, err := ck.Refunds.Create(ctx, params)
	must(err)
	out["created"] = created
	id, _ := created["id"].(string)
	out["again"], err = ck.Refunds.Create(ctx, params)
	must(err)
	out["read"], err = ck.Refunds.Get(ctx, id)
	must(err)
	out["listed"] = ids(ck.Refunds.List(ctx, url.Values{"invoice_id": {paid}, "limit": {"1"}}))
	out["by_refund_id"] = ids(ck.Refunds.List(ctx, url.Values{"refund_id": {"go-r1"}}))
	out["cancelled"], err = ck.Refunds.Action(ctx, id, "cancel", nil)
	must(err)
	out["cancel_again"] = attempt(ck.Refunds.Action(ctx, id, "cancel", nil))
	return out
}

func main() {
	ctx := context.Background()
	var out result
	switch args := os.Args[1:]; args[0] {
	case "vectors":
		out = vectors(args[1], args[2])
	case "e2e":
		out = e2e(ctx)
	case "verify":
		out = verify(args[1])
	case "retries":
		out = retries(ctx)
	case "strays":
		out = strays(ctx)
	case "refunds":
		out = refunds(ctx)
	default:
		must(fmt.Errorf("unknown command %q", args[0]))
	}
	must(json.NewEncoder(os.Stdout).Encode(out))
}
