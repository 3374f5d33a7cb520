package shardclient

import (
	"errors"
	"fmt"
	"io"

	"github.com/valyala/fasthttp"
)

// How an answer is read. A node's answer is held whole (the proxy passes
// it on once it is complete and decides on its status), so what a node
// sends is memory of this process until the answer is written on. An
// answer whose stated length is at most inPlaceAnswer is read by the pool
// into its pooled buffer, as fasthttp does. Any other one (longer, or
// chunked) is streamed from the connection into a buffer of its own,
// never pooled, that grows as bytes arrive: each growth is first asked of
// the request's Budget, and an answer whose stated length, or whose bytes
// so far, pass the request's limit is refused at once, its connection
// closed, nothing more read. A giant answer so costs at most its limit,
// once, and never stays in a pool after its request.
const inPlaceAnswer = 16 << 10

// firstAnswerBuffer is the first buffer of a streamed answer without a
// stated length; each growth doubles it.
const firstAnswerBuffer = 64 << 10

// Budget is memory a request's answer is charged to while it is held (a
// tenant's share of the gateway, for its self-hosted nodes). Take asks for
// n more bytes, and fails when they are not there; Give returns them.
type Budget interface {
	Take(n int) error
	Give(n int)
}

// Answer bounds one request's answer and holds it once it was streamed
// (see inPlaceAnswer). The zero value bounds it by Config.MaxResponseBody
// and charges nothing.
type Answer struct {
	Max    int    // bytes; 0: Config.MaxResponseBody
	Budget Budget // charged for a streamed answer's buffer while it is held; nil: none

	body []byte // the streamed answer's buffer, charged to Budget
}

// Owned returns the answer's body when it was streamed into a buffer of
// its own: the caller may keep it past the response's release (until
// Release). An answer read in place is the response's, pooled with it.
func (a *Answer) Owned() ([]byte, bool) { return a.body, a.body != nil }

// Release gives a streamed answer's buffer back to its budget; the
// caller must not use the buffer after. A nil a releases nothing.
func (a *Answer) Release() {
	if a == nil || a.body == nil {
		return
	}
	if a.Budget != nil {
		a.Budget.Give(cap(a.body))
	}
	a.body = nil
}

// AnswerTooLargeError is a node's answer refused for its size: it is never
// sent again (the same request gets the same answer).
type AnswerTooLargeError struct {
	Limit  int
	Stated int // the length the node stated, or -1 when it sent more than Limit
}

func (e *AnswerTooLargeError) Error() string {
	if e.Stated >= 0 {
		return fmt.Sprintf("the answer is %d bytes, over the limit of %d", e.Stated, e.Limit)
	}
	return fmt.Sprintf("the answer is over the limit of %d bytes", e.Limit)
}

// tooLarge reports whether err refused an answer for its size.
func tooLarge(err error) bool {
	var e *AnswerTooLargeError
	return errors.As(err, &e)
}

// isBudget reports whether err is a budget's refusal.
func isBudget(err error) bool {
	var e *BudgetError
	return errors.As(err, &e)
}

// BudgetError is Budget.Take's refusal, as Do returns it: the answer was
// left unread (not sent again: the same budget would refuse it).
type BudgetError struct{ Err error }

func (e *BudgetError) Error() string { return "shardclient: the answer's budget: " + e.Err.Error() }
func (e *BudgetError) Unwrap() error { return e.Err }

// readAnswer finishes reading resp after the pool returned its head: a
// streamed body is read into a buffer of a's (limit max), then set as the
// response's body; an answer read in place is left as it is. The
// connection goes back to the pool only when the body was read to its
// end: one left half-read is closed.
func readAnswer(resp *fasthttp.Response, a *Answer, max int) error {
	stream := resp.BodyStream()
	if stream == nil {
		return nil // nothing streamed (a HEAD, a 204, an error before the body)
	}
	if n := resp.Header.ContentLength(); n >= 0 && n <= inPlaceAnswer {
		return resp.CloseBodyStream() // read in place already: the stream only holds the connection
	}
	body, err := a.read(stream, resp.Header.ContentLength(), max)
	if t, ok := err.(interface{ Timeout() bool }); ok && t.Timeout() {
		err = fasthttp.ErrTimeout // as the pool says it of an answer read in place
	}
	if err != nil {
		resp.Header.SetConnectionClose() // the rest of the answer is still on the wire
		_ = resp.CloseBodyStream()
		return err
	}
	if err := resp.CloseBodyStream(); err != nil {
		a.Release()
		return err
	}
	resp.SetBodyRaw(body) // not the pool's: ReleaseResponse only drops it
	return nil
}

// read reads a streamed body of stated length n (-1: unknown) into a's
// buffer, at most max bytes.
func (a *Answer) read(r io.Reader, n, max int) ([]byte, error) {
	if n > max {
		return nil, &AnswerTooLargeError{Limit: max, Stated: n}
	}
	size := firstAnswerBuffer
	if n >= 0 {
		size = n // stated: one buffer, exactly its size
	}
	if err := a.grow(min(size, max)); err != nil {
		return nil, err
	}
	for {
		if len(a.body) == cap(a.body) {
			if n >= 0 {
				return a.body, nil // the stated length, read whole
			}
			if len(a.body) == max {
				return a.full(r, max)
			}
			if err := a.grow(min(2*cap(a.body), max)); err != nil {
				return nil, err
			}
		}
		m, err := r.Read(a.body[len(a.body):cap(a.body)])
		a.body = a.body[:len(a.body)+m]
		switch {
		case errors.Is(err, io.EOF):
			return a.body, nil
		case err != nil:
			a.Release()
			return nil, err
		}
	}
}

// full ends the read of an answer of unstated length that filled its
// limit: it is whole if nothing follows.
func (a *Answer) full(r io.Reader, max int) ([]byte, error) {
	var one [1]byte
	for {
		m, err := r.Read(one[:])
		switch {
		case m > 0:
			a.Release()
			return nil, &AnswerTooLargeError{Limit: max, Stated: -1}
		case errors.Is(err, io.EOF):
			return a.body, nil
		case err != nil:
			a.Release()
			return nil, err
		}
	}
}

// grow moves a's buffer to one of capacity size, charging the new one
// before it is made and giving the old one back after the copy: the
// budget holds what is allocated.
func (a *Answer) grow(size int) error {
	if a.Budget != nil {
		if err := a.Budget.Take(size); err != nil {
			a.Release()
			return &BudgetError{Err: err}
		}
	}
	next := make([]byte, len(a.body), size)
	copy(next, a.body)
	old := cap(a.body)
	a.body = next
	if a.Budget != nil && old > 0 {
		a.Budget.Give(old)
	}
	return nil
}
