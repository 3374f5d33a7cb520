package apierr

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/jobbie/jobbie/wire"
)

// RequestIDHeader carries the request id from the gateway to shards and
// control, so one id names a request everywhere it went.
const RequestIDHeader = wire.RequestIDHeader

const requestIDKey = "jobbie.request_id"

// RequestID is fiber middleware that adopts a well-formed incoming request
// id or makes one, and echoes it in the response.
func RequestID(c *fiber.Ctx) error {
	id := c.Get(RequestIDHeader)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Locals(requestIDKey, id)
	c.Set(RequestIDHeader, id)
	return c.Next()
}

func newRequestID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "req_" + hex.EncodeToString(b[:])
}

// RequestIDOf returns the request id set by RequestID.
func RequestIDOf(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDKey).(string)
	return id
}

func validRequestID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		ch := id[i]
		if !(ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z' || ch >= '0' && ch <= '9' || ch == '_' || ch == '-') {
			return false
		}
	}
	return true
}

// Handler is the fiber ErrorHandler of every Jobbie server: the one place
// where errors become HTTP responses.
func Handler(c *fiber.Ctx, err error) error {
	if silenced(c, err) {
		return nil // no request came: nothing to answer (see QuietListener)
	}
	e := fromFiber(c, err)
	out := *e
	out.RequestID = RequestIDOf(c)
	if out.RequestID == "" {
		// A request refused before routing (headers too large, say) never
		// met the middleware, yet its answer still names it.
		out.RequestID = newRequestID()
		c.Set(RequestIDHeader, out.RequestID)
	}
	if out.RetryAfter > 0 {
		c.Set(fiber.HeaderRetryAfter, strconv.Itoa(out.RetryAfter))
	}
	return c.Status(Status(out.Code)).JSON(wire.ErrorBody{Error: out.Wire()})
}

// fromFiber maps fiber's own errors (unknown route, body too large, …)
// into the catalog.
func fromFiber(c *fiber.Ctx, err error) *Error {
	var fe *fiber.Error
	if errors.As(err, &fe) {
		switch fe.Code {
		case fiber.StatusNotFound:
			return New(NotFound, "no such endpoint")
		case fiber.StatusMethodNotAllowed:
			// fiber found the path under other methods and set the Allow
			// header to them.
			return New(MethodNotAllowed, "%s %s is not served; its methods are %s", c.Method(), c.Path(),
				c.GetRespHeader(fiber.HeaderAllow))
		case fiber.StatusRequestEntityTooLarge:
			return New(TooLarge, "request body is over the size limit")
		case fiber.StatusUnprocessableEntity, fiber.StatusBadRequest:
			return New(BadRequest, "%s", fe.Message)
		case fiber.StatusRequestHeaderFieldsTooLarge:
			return New(HeadersTooLarge, "the request line and headers are over the size limit: send a shorter path, key or header")
		case fiber.StatusRequestTimeout:
			return Retry(Unavailable, 1, "request timed out")
		}
		return &Error{Code: Internal, Message: fe.Message}
	}
	return From(err)
}
