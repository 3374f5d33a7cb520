package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// -o yaml is -o json's data, for every kind of answer; a bad -o or
// --interval is refused before any request; --watch lists again until
// its context ends, showing what changed.
func TestOutputYAMLAndWatch(t *testing.T) {
	t.Parallel()
	d := startDevCLI(t)
	ctx := context.Background()
	out := d.run(t, "enqueue", "yaml.q", `{"to":"a@example.com","n":"123","flag":"yes"}`, "--tag", "k=v")
	jobID := strings.Fields(out)[0]

	// asData decodes JSON or YAML into the same plain values.
	asData := func(text string, isYAML bool) any {
		t.Helper()
		var v any
		if isYAML {
			require.NoError(t, yaml.Unmarshal([]byte(text), &v), text)
			b, err := json.Marshal(v)
			require.NoError(t, err)
			text = string(b)
		}
		require.NoError(t, json.Unmarshal([]byte(text), &v), text)
		return steady(v)
	}
	for _, args := range [][]string{{"inspect", jobID}, {"queues"}, {"queues", "get", "yaml.q"}, {"keys"}, {"status"}, {"namespaces"}} {
		js := d.run(t, append(args, "-o", "json")...)
		ys := d.run(t, append(args, "-o", "yaml")...)
		require.NotContains(t, ys, "{\n", "%v printed JSON, not YAML:\n%s", args, ys)
		require.Equal(t, asData(js, false), asData(ys, true), "%v:\n%s", args, ys)
	}
	ys := d.run(t, "inspect", jobID, "-o", "yaml")
	require.Contains(t, ys, `"n": "123"`, "a string that reads as a number stays a string (and n, a YAML 1.1 boolean, is quoted)")
	require.Contains(t, ys, `flag: "yes"`, "a string YAML 1.1 reads as a boolean stays a string")

	// Refused before any request.
	var hits atomic.Int32
	counter := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	t.Cleanup(counter.Close)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"queues", "-o", "xml"}, `--output must be table, json or yaml, not "xml"`},
		{[]string{"queues", "--watch", "--interval", "10ms"}, "--interval must be at least 500ms"},
		{[]string{"schedules", "--interval", "5s"}, "--interval applies only with --watch"},
	} {
		_, err := d.as(t, d.ownerFile, append(tc.args, "--url", counter.URL)...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
	_, _, err := runJobbie(t, "", "queues", "get", "yaml.q", "--watch")
	require.ErrorContains(t, err, "unknown flag: --watch", "get is not a list")
	require.Zero(t, hits.Load())

	// --watch: each list a JSON value; a queue enqueued to between frames
	// shows in a later one; the context's end ends it without error.
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &frames{changed: make(chan struct{}, 1)}
	done := make(chan error, 1)
	go func() {
		root := newRoot()
		root.SetArgs([]string{"queues", "--watch", "--interval", "500ms", "-o", "json", "--url", d.gateway, "--key-file", d.ownerFile})
		root.SetOut(w)
		done <- root.ExecuteContext(wctx)
	}()
	names := func() (all [][]string) {
		dec := json.NewDecoder(bytes.NewReader(w.bytes()))
		for {
			var qs []struct{ Name string }
			if dec.Decode(&qs) != nil {
				return all
			}
			var ns []string
			for _, q := range qs {
				ns = append(ns, q.Name)
			}
			all = append(all, ns)
		}
	}
	waitFor := func(what string, ok func([][]string) bool) {
		t.Helper()
		deadline := time.After(60 * time.Second)
		for !ok(names()) {
			select {
			case <-w.changed:
			case err := <-done:
				t.Fatalf("watch ended before %s: %v", what, err)
			case <-deadline:
				t.Fatalf("no %s within 60 s:\n%s", what, w.bytes())
			}
		}
	}
	waitFor("first frame", func(f [][]string) bool { return len(f) >= 1 })
	require.Equal(t, []string{"yaml.q"}, names()[0])
	d.run(t, "enqueue", "watch.q", "{}")
	waitFor("frame with watch.q", func(f [][]string) bool {
		return len(f) >= 2 && strings.Join(f[len(f)-1], ",") == "watch.q,yaml.q"
	})
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("watch did not end with its context")
	}
}

// steady is v without the fields that change from one call to the next
// (ages, clocks), so two calls' answers compare equal.
func steady(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if volatile[k] {
				delete(v, k)
			} else {
				v[k] = steady(x)
			}
		}
	case []any:
		for i := range v {
			v[i] = steady(v[i])
		}
	}
	return v
}

var volatile = map[string]bool{"oldest_pending_age": true, "last_contact": true, "last_contact_ms": true, "age": true}

// frames is a writer the watch test reads while the command writes, and
// which signals each write.
type frames struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	changed chan struct{}
}

func (f *frames) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf.Write(p)
	select {
	case f.changed <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (f *frames) bytes() []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]byte(nil), f.buf.Bytes()...)
}
