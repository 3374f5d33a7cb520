package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// reply is a raw HTTP response, for checking statuses and error bodies the
// way a curl user sees them.
type reply struct {
	Status int
	Header http.Header
	Body   map[string]any
	Raw    []byte
}

func (r reply) code() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func (r reply) field() string {
	e, _ := r.Body["error"].(map[string]any)
	s, _ := e["field"].(string)
	return s
}

// call sends method url with key as bearer (none when empty) and body (a
// string is sent as is, anything else as JSON).
func call(t *testing.T, method, url, key string, body any, hdr ...string) reply {
	t.Helper()
	return callVia(t, http.DefaultClient, method, url, key, body, hdr...)
}

// callVia is call through hc (an https:// url needs a client that trusts
// the CA, and presents a certificate where the server asks for one).
func callVia(t *testing.T, hc *http.Client, method, url, key string, body any, hdr ...string) reply {
	t.Helper()
	var rd io.Reader
	switch v := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(v)
	case []byte:
		rd = bytes.NewReader(v)
	default:
		b, err := json.Marshal(v)
		require.NoError(t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := hc.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	out := reply{Status: res.StatusCode, Header: res.Header, Raw: raw}
	if len(raw) > 0 && raw[0] == '{' {
		require.NoError(t, json.Unmarshal(raw, &out.Body), string(raw))
	}
	return out
}
