package provider

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/tenancy"
)

// providerData is what Configure hands resources and data sources.
type providerData struct {
	client    *client.Client
	namespace string // the default namespace of resources that name none
}

// in returns a client whose requests go to namespace ns.
func (d *providerData) in(ns string) *client.Client {
	if ns == "" {
		ns = d.namespace
	}
	return d.client.WithNamespace(ns)
}

// configure takes the provider's data in a resource's or data source's
// Configure; it is nil while the provider is not configured yet (early
// validation), which the callers tolerate.
func configure(data any, diags *diag.Diagnostics) *providerData {
	if data == nil {
		return nil
	}
	d, ok := data.(*providerData)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("expected *providerData, got %T; this is a bug in the provider", data))
		return nil
	}
	return d
}

// keyDefaultNamespace reads the default namespace an API key carries (the
// "dns" claim of the JWT; the signature is the server's business, not
// checked here). A key that cannot be read falls back to "default", and
// the server then says what is wrong with the key.
func keyDefaultNamespace(key string) string {
	var claims tenancy.KeyClaims
	if _, _, err := jwt.NewParser().ParseUnverified(key, &claims); err == nil && claims.DefaultNamespace != "" {
		return claims.DefaultNamespace
	}
	return tenancy.DefaultNamespace
}

// retryFor bounds how long a call is retried while the service says to
// come back later (429, or 503 while a shard elects a leader).
const retryFor = 60 * time.Second

// retry runs fn until it succeeds, fails for good, or retryFor passes. A
// read is retried on every retryable answer; a write only when the server
// says it did nothing (rate limited, or no leader to take it), never on a
// 503 "unavailable" after which the write may or may not have happened.
func retry[T any](ctx context.Context, write bool, fn func() (T, error)) (T, error) {
	deadline := time.Now().Add(retryFor)
	wait := 200 * time.Millisecond
	for {
		out, err := fn()
		e, ok := client.AsError(err)
		if err == nil || !ok || !e.Retryable() || (write && !safeToRepeat(e)) || time.Now().After(deadline) {
			return out, err
		}
		d := wait
		if e.RetryAfter > 0 {
			d = e.RetryAfter
		}
		select {
		case <-ctx.Done():
			return out, err
		case <-time.After(d):
		}
		wait = min(wait*2, 2*time.Second)
	}
}

func safeToRepeat(e *client.Error) bool {
	return e.Status == http.StatusTooManyRequests || e.Code == client.CodeNoLeader
}

// retryErr is retry for calls that return only an error.
func retryErr(ctx context.Context, write bool, fn func() error) error {
	_, err := retry(ctx, write, func() (struct{}, error) { return struct{}{}, fn() })
	return err
}
