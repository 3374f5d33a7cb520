package edge

import (
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// A read Config.Streamed picks is forwarded like any (forward.go), but its
// answer is streamed as it arrives rather than read whole: it may be
// larger than memory and take longer than the forward's timeout to send.
// The leader must start answering within that timeout. Only reads are
// streamed: net/http may send a request again on a fresh connection,
// which is harmless for a read alone.

// forwardStream sends the request to the leader at addr and streams its
// answer back.
func (g *Group) forwardStream(c *fiber.Ctx, addr string) error {
	req, err := http.NewRequest(c.Method(), "https://"+addr+string(c.Request().URI().RequestURI()), nil)
	if err != nil {
		return err
	}
	c.Request().Header.VisitAll(func(k, v []byte) {
		switch string(k) {
		case fiber.HeaderConnection, fiber.HeaderHost, fiber.HeaderContentLength, fiber.HeaderTransferEncoding:
			return
		}
		req.Header.Add(string(k), string(v))
	})
	g.identify(c, req.Header.Set, req.Header.Del)
	resp, err := g.stream.Do(req)
	if err != nil {
		return g.failed(c, addr, err)
	}
	c.Status(resp.StatusCode)
	for k, vs := range resp.Header {
		if hopHeader(k) {
			continue
		}
		for _, v := range vs {
			c.Response().Header.Add(k, v)
		}
	}
	size := -1
	if resp.ContentLength >= 0 {
		size = int(resp.ContentLength)
	}
	return c.SendStream(resp.Body, size) // fasthttp closes the body once sent
}
