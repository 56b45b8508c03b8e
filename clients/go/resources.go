package coinkeep

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// Iter walks a keyset-paged list page by page, like bufio.Scanner:
//
//	for it.Next() { use(it.Current()) }
//	if err := it.Err(); err != nil { ... }
type Iter[T any] struct {
	c     *Client
	ctx   context.Context
	path  string
	query url.Values
	items []T
	cur   T
	err   error
	last  bool
}

// Paginate lists path with query (limit= sets the page size), decoding items as T.
func Paginate[T any](ctx context.Context, c *Client, path string, query url.Values) *Iter[T] {
	q := url.Values{}
	for k, v := range query {
		q[k] = append([]string(nil), v...)
	}
	return &Iter[T]{c: c, ctx: ctx, path: path, query: q}
}

// Next advances to the next item, fetching the next page when needed.
func (it *Iter[T]) Next() bool {
	for len(it.items) == 0 {
		if it.last || it.err != nil {
			return false
		}
		var page struct {
			Items      []T     `json:"items"`
			NextCursor *string `json:"next_cursor"`
		}
		if it.err = it.c.Do(it.ctx, http.MethodGet, it.path, it.query, nil, &page); it.err != nil {
			return false
		}
		it.items = page.Items
		if page.NextCursor == nil || *page.NextCursor == "" {
			it.last = true
		} else {
			it.query.Set("cursor", *page.NextCursor)
		}
	}
	it.cur, it.items = it.items[0], it.items[1:]
	return true
}

// Current is the item Next moved to.
func (it *Iter[T]) Current() T { return it.cur }

// Err is the error that ended the walk, if any.
func (it *Iter[T]) Err() error { return it.err }

// Resource is a collection of the API (addresses, transactions, withdrawals, refunds, stray
// payments, webhook endpoints and deliveries), its objects decoded as Object.
type Resource struct {
	c    *Client
	path string
}

func (r *Resource) url(id string, action ...string) string {
	p := r.path + "/" + url.PathEscape(id)
	for _, a := range action {
		p += "/" + a
	}
	return p
}

// Create POSTs params (a struct or map) to the collection.
func (r *Resource) Create(ctx context.Context, params any, opts ...RequestOption) (Object, error) {
	var out Object
	return out, r.c.Do(ctx, http.MethodPost, r.path, nil, params, &out, opts...)
}

// Get reads one object.
func (r *Resource) Get(ctx context.Context, id string) (Object, error) {
	var out Object
	return out, r.c.Do(ctx, http.MethodGet, r.url(id), nil, nil, &out)
}

// List walks the collection with the given filters.
func (r *Resource) List(ctx context.Context, query url.Values) *Iter[Object] {
	return Paginate[Object](ctx, r.c, r.path, query)
}

// Action POSTs to id/action: "cancel", "archive", "restore", "retry", "rotate-secret", and for
// stray payments "credit" and "refund".
func (r *Resource) Action(ctx context.Context, id, action string, params any, opts ...RequestOption) (Object, error) {
	if params == nil {
		params = struct{}{}
	}
	var out Object
	return out, r.c.Do(ctx, http.MethodPost, r.url(id, action), nil, params, &out, opts...)
}

// Update PATCHes one object (webhook endpoints).
func (r *Resource) Update(ctx context.Context, id string, params any) (Object, error) {
	var out Object
	return out, r.c.Do(ctx, http.MethodPatch, r.url(id), nil, params, &out)
}

// Delete removes one object (webhook endpoints).
func (r *Resource) Delete(ctx context.Context, id string) error {
	return r.c.Do(ctx, http.MethodDelete, r.url(id), nil, nil, nil)
}

// Balances walks the account's balances.
func (c *Client) Balances(ctx context.Context) *Iter[Object] {
	return Paginate[Object](ctx, c, "/v1/balances", nil)
}

// Rates reads the coins' rates in a fiat currency.
func (c *Client) Rates(ctx context.Context, fiat string) (Object, error) {
	var out Object
	return out, c.Do(ctx, http.MethodGet, "/v1/rates", url.Values{"fiat": {fiat}}, nil, &out)
}

// Currencies reads the coins enabled for the merchant.
func (c *Client) Currencies(ctx context.Context) (Object, error) {
	var out Object
	return out, c.Do(ctx, http.MethodGet, "/v1/currencies", nil, nil, &out)
}

// Invoice is SPEC's invoice; amounts are decimal strings, optional fields nil.
type Invoice struct {
	ID              string            `json:"id"`
	Status          string            `json:"status"`
	Currency        string            `json:"currency"`
	Amount          string            `json:"amount"`
	CoinID          *string           `json:"coin_id"`
	Ticker          *string           `json:"ticker"`
	Network         *string           `json:"network"`
	Address         *string           `json:"address"`
	AmountCrypto    *string           `json:"amount_crypto"`
	PayerAmount     *string           `json:"payer_amount"`
	PaidAmount      string            `json:"paid_amount"`
	RemainingAmount string            `json:"remaining_amount"`
	OverpaidAmount  string            `json:"overpaid_amount"`
	RefundedAmount  string            `json:"refunded_amount"`
	Resolution      *string           `json:"resolution"` // "accepted_underpayment" once Accept took an underpaid invoice
	AmountFiat      *string           `json:"amount_fiat"`
	FiatCurrency    *string           `json:"fiat_currency"`
	RateLocked      *string           `json:"rate_locked"`
	RateLockedAt    *time.Time        `json:"rate_locked_at"`
	LatePayment     bool              `json:"late_payment"`
	FeePaidBy       string            `json:"fee_paid_by"`
	OrderID         *string           `json:"order_id"`
	Description     *string           `json:"description"`
	ReturnURL       *string           `json:"return_url"`
	WebhookURL      *string           `json:"webhook_url"`
	Metadata        map[string]string `json:"metadata"`
	AllowedCoinIDs  []string          `json:"allowed_coin_ids"`
	CheckoutURL     string            `json:"checkout_url"`
	TTLExpiresAt    time.Time         `json:"ttl_expires_at"`
	ExpiredAt       *time.Time        `json:"expired_at"`
	CreatedAt       time.Time         `json:"created_at"`
	UpdatedAt       time.Time         `json:"updated_at"`
}

// InvoiceParams is the body of POST /v1/invoices; Amount and Currency are required.
type InvoiceParams struct {
	Amount               string            `json:"amount"`
	Currency             string            `json:"currency"`
	OrderID              string            `json:"order_id,omitempty"`
	Description          string            `json:"description,omitempty"`
	ReturnURL            string            `json:"return_url,omitempty"`
	WebhookURL           string            `json:"webhook_url,omitempty"`
	CoinID               string            `json:"coin_id,omitempty"`
	AllowedCoinIDs       []string          `json:"allowed_coin_ids,omitempty"`
	IdempotencyByOrderID bool              `json:"idempotency_by_order_id,omitempty"`
	Metadata             map[string]string `json:"metadata,omitempty"`
}

// Invoices is /v1/invoices with typed invoices.
type Invoices struct{ r Resource }

func (s *Invoices) Create(ctx context.Context, p InvoiceParams, opts ...RequestOption) (*Invoice, error) {
	var out Invoice
	return &out, s.r.c.Do(ctx, http.MethodPost, s.r.path, nil, p, &out, opts...)
}

func (s *Invoices) Get(ctx context.Context, id string) (*Invoice, error) {
	var out Invoice
	return &out, s.r.c.Do(ctx, http.MethodGet, s.r.url(id), nil, nil, &out)
}

func (s *Invoices) Cancel(ctx context.Context, id string, opts ...RequestOption) (*Invoice, error) {
	var out Invoice
	return &out, s.r.c.Do(ctx, http.MethodPost, s.r.url(id, "cancel"), nil, struct{}{}, &out, opts...)
}

// Accept takes an underpaid invoice as paid: status "paid", Resolution "accepted_underpayment".
// Any other status is a 409 conflict with Details["reason"] "invoice_not_underpaid".
func (s *Invoices) Accept(ctx context.Context, id string, opts ...RequestOption) (*Invoice, error) {
	var out Invoice
	return &out, s.r.c.Do(ctx, http.MethodPost, s.r.url(id, "accept"), nil, struct{}{}, &out, opts...)
}

// List walks the invoices; filters such as status, created_from and limit go in query.
func (s *Invoices) List(ctx context.Context, query url.Values) *Iter[Invoice] {
	return Paginate[Invoice](ctx, s.r.c, s.r.path, query)
}
