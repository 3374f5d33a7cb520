package selfhosted

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// postControl posts body to path at each control URL in turn until one
// answers: want decodes into out; another 4xx is control's refusal,
// returned with its message; a network error or a 5xx tries the next.
func postControl(ctx context.Context, hc *http.Client, urls []string, path string, body []byte, want int, out any) error {
	if len(urls) == 0 {
		return errors.New("no control URL known: pass --control-url")
	}
	var errs []error
	for _, u := range urls {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(u, "/")+path, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rb, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		switch {
		case resp.StatusCode == want:
			return json.Unmarshal(rb, out)
		case resp.StatusCode >= 400 && resp.StatusCode < 500:
			return fmt.Errorf("control %s answered %s: %s", u, resp.Status, bytes.TrimSpace(rb))
		}
		errs = append(errs, fmt.Errorf("control %s answered %s: %s", u, resp.Status, bytes.TrimSpace(rb)))
	}
	return errors.Join(errs...)
}
