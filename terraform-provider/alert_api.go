package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jobbie/jobbie/client"
	"github.com/jobbie/jobbie/wire"
)

// The alert rule calls (docs/api/alerts.md), which the Go SDK does not
// have yet: made here with the provider's endpoint and key, a refusal
// read into a *client.Error as the SDK would, so retry and the
// diagnostics treat them as any other call.

var alertHTTP = &http.Client{Timeout: 30 * time.Second}

// alertCall makes one request under /api/v1/alerts in namespace ns
// (name "": the collection).
func (d *providerData) alertCall(ctx context.Context, ns, method, name string, in, out any) error {
	u := strings.TrimRight(d.endpoint, "/") + "/api/v1/alerts"
	if name != "" {
		u += "/" + url.PathEscape(name)
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+d.key)
	req.Header.Set("User-Agent", d.userAgent)
	req.Header.Set(wire.NamespaceHeader, ns)
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := alertHTTP.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return err
	}
	if res.StatusCode >= 300 {
		var e struct {
			Error struct {
				Code, Message, Field string
				RequestID            string `json:"request_id"`
			} `json:"error"`
		}
		_ = json.Unmarshal(raw, &e)
		ce := &client.Error{Status: res.StatusCode, Code: e.Error.Code, Message: e.Error.Message, Field: e.Error.Field, RequestID: e.Error.RequestID}
		if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil {
			ce.RetryAfter = time.Duration(s) * time.Second
		}
		if ce.Message == "" {
			ce.Message = http.StatusText(res.StatusCode)
		}
		return ce
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}
