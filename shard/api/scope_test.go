package api

import (
	"bufio"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/jobbie/jobbie/wire"
)

// withRequest runs f on a fiber context of a request with the headers a
// gateway sends, and hdr.
func withRequest(t testing.TB, f func(c *fiber.Ctx), hdr ...string) {
	app := fiber.New()
	rc := &fasthttp.RequestCtx{}
	raw := "POST /api/v1/ack/job_01HX0000000000000000000000 HTTP/1.1\r\nHost: shard\r\nContent-Type: application/json\r\n" +
		wire.ShardNamespaceHeader + ": t_01hx0000000000000000000000/default\r\n" + wire.RequestIDHeader + ": req-1\r\n"
	for i := 0; i+1 < len(hdr); i += 2 {
		raw += hdr[i] + ": " + hdr[i+1] + "\r\n"
	}
	require.NoError(t, rc.Request.Header.Read(bufioReader(raw+"\r\n")))
	c := app.AcquireCtx(rc)
	defer app.ReleaseCtx(c)
	f(c)
}

// The header as the shard reads it off the wire: absent is every queue,
// present but empty is none.
func TestScopeFromHeader(t *testing.T) {
	withRequest(t, func(c *fiber.Ctx) { require.True(t, scope(c).All()) })
	withRequest(t, func(c *fiber.Ctx) {
		sc := scope(c)
		require.False(t, sc.All())
		require.False(t, sc.Allows("emails.send"))
	}, wire.QueueScopeHeader, "")
	withRequest(t, func(c *fiber.Ctx) {
		sc := scope(c)
		require.True(t, sc.Allows("emails.send"))
		require.True(t, sc.Allows("billing"))
		require.False(t, sc.Allows("billing.refund"))
	}, wire.QueueScopeHeader, "emails.*, billing")
	withRequest(t, func(c *fiber.Ctx) {
		sc := scope(c)
		require.False(t, sc.All())
		require.False(t, sc.Allows("emails.send"), "sent twice: no queue")
	}, wire.QueueScopeHeader, "*", wire.QueueScopeHeader, "emails.*")
}

// BenchmarkScopeHeader is what the scope costs a request: without the
// header one lookup among the request's headers, no allocation; with it,
// the parse.
func BenchmarkScopeHeader(b *testing.B) {
	for _, c := range []struct {
		name string
		hdr  []string
	}{
		{"absent", nil},
		{"present", []string{wire.QueueScopeHeader, "emails.*,billing.charge,reports.daily"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			withRequest(b, func(ctx *fiber.Ctx) {
				b.ReportAllocs()
				for b.Loop() {
					if !scope(ctx).Allows("emails.send") {
						b.Fatal("refused")
					}
				}
			}, c.hdr...)
		})
	}
}

func bufioReader(s string) *bufio.Reader { return bufio.NewReader(strings.NewReader(s)) }
