package shardlink

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Errors of Conn.Do. ErrNotTaken: the request never left this process
// (the link was busy, had ended, or the request is over the node's
// bounds), so it may go another way. A request written and then lost
// with its link is a *LostError: the node may have applied it.
var (
	ErrNotTaken = errors.New("shardlink: the request was not sent on the link")
)

// LostError is a request's end when its link ended after the request
// was written and before its answer came.
type LostError struct{ Err error }

func (e *LostError) Error() string {
	return "shardlink: the link ended before the answer: " + e.Err.Error()
}
func (e *LostError) Unwrap() error { return e.Err }

// TooLargeError is an answer refused for its size: over max bytes of
// body (Stated is its length, or -1 when the whole frame was over the
// bound and was never read).
type TooLargeError struct{ Limit, Stated int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("shardlink: the answer is over the limit of %d bytes", e.Limit)
}

// answerHead is what an answer frame may hold beyond its body's bound:
// its status line and headers.
const answerHead = 64 << 10

// readBuffer is a link reader's buffer: one read takes in many frames.
const readBuffer = 64 << 10

// Conn is the caller's end of a link.
type Conn struct {
	conn  net.Conn
	br    *bufio.Reader
	w     *writer
	idle  time.Duration // closes the link after this long with nothing in flight
	done  chan struct{} // closed when the link has ended
	ended sync.WaitGroup

	maxRequests, maxBody, maxHead int           // the node's bounds
	keepAlive                     time.Duration // the node's keep-alive interval; 0: it states none
	heard                         atomic.Int64  // unix nanoseconds of the last frame read

	mu       sync.Mutex
	calls    map[uint64]*call
	next     uint64
	lastSend time.Time
	busy     time.Time // since when calls has not been empty
	err      error     // why the link takes no more requests
	closed   bool
}

// call is one request in flight.
type call struct {
	id        uint64
	max       int          // the answer's body bound
	state     atomic.Int32 // queued, written or withdrawn
	abandoned bool         // the caller gave up after it was written (under mu)
	answer    chan []byte  // the answer frame's payload; nil: over max
}

const (
	queued int32 = iota
	written
	withdrawn
)

func (c *call) take() bool { return c.state.CompareAndSwap(queued, written) }
func (c *call) done(bool)  {}

// Options are a link's caller side settings.
type Options struct {
	WriteTimeout time.Duration // bounds a batch of writes
	IdleTimeout  time.Duration // the link closes after this long with nothing in flight; 0: never
}

// Open upgrades conn, a fresh connection to a node's HTTP listener (TLS
// already shaken hands, or a Unix socket), to a link, within deadline.
// host is the Host header. A node that does not serve links (an older
// one answers 404) is an *UpgradeError with its status; conn is closed on
// any error.
func Open(conn net.Conn, host string, deadline time.Time, o Options) (*Conn, error) {
	fail := func(err error) (*Conn, error) {
		_ = conn.Close()
		return nil, err
	}
	_ = conn.SetDeadline(deadline)
	req := "GET " + Path + " HTTP/1.1\r\nHost: " + host + "\r\nConnection: Upgrade\r\nUpgrade: " + Protocol + "\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return fail(err)
	}
	br := bufio.NewReaderSize(conn, readBuffer)
	var h fasthttp.ResponseHeader
	if err := h.Read(br); err != nil {
		return fail(err)
	}
	if h.StatusCode() != fasthttp.StatusSwitchingProtocols || !bytes.EqualFold(h.Peek("Upgrade"), []byte(Protocol)) {
		return fail(&UpgradeError{Status: h.StatusCode()})
	}
	c := &Conn{conn: conn, br: br, idle: o.IdleTimeout, done: make(chan struct{}), calls: map[uint64]*call{}, lastSend: time.Now()}
	c.w = newWriter(conn, o.WriteTimeout, c.end)
	var err error
	if c.maxRequests, err = positive(&h, MaxRequestsHeader); err == nil {
		if c.maxBody, err = positive(&h, MaxBodyHeader); err == nil {
			c.maxHead, err = positive(&h, MaxHeadHeader)
		}
	}
	if err != nil {
		return fail(err)
	}
	if ms, err := strconv.Atoi(string(h.Peek(KeepAliveHeader))); err == nil && ms > 0 {
		c.keepAlive = time.Duration(ms) * time.Millisecond
	}
	c.heard.Store(time.Now().UnixNano())
	_ = conn.SetDeadline(time.Time{})
	c.ended.Add(1)
	go func() { defer c.ended.Done(); c.read() }()
	return c, nil
}

func positive(h *fasthttp.ResponseHeader, name string) (int, error) {
	n, err := strconv.Atoi(string(h.Peek(name)))
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("shardlink: the node's 101 states no %s", name)
	}
	return n, nil
}

// UpgradeError is a node's refusal to open a link.
type UpgradeError struct{ Status int }

func (e *UpgradeError) Error() string {
	return fmt.Sprintf("shardlink: the node answered the upgrade with %d", e.Status)
}

// Alive reports whether the link still takes requests.
func (c *Conn) Alive() bool {
	select {
	case <-c.done:
		return false
	default:
		return true
	}
}

// Done is closed when the link has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Close ends the link: the requests in flight end with a *LostError
// (or ErrNotTaken for those not yet written). It waits for the link's
// reader.
func (c *Conn) Close() {
	c.end(errClosed)
	c.ended.Wait()
}

var errClosed = errors.New("shardlink: the link was closed")

// end ends the link for err, once.
func (c *Conn) end(err error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	if err == nil {
		err = errClosed
	}
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
	_ = c.conn.Close()
	c.w.close()
	close(c.done)
}

// Do sends req on the link and reads its answer into resp by deadline
// (zero: none), refusing an answer whose body is over max bytes
// (*TooLargeError). The deadline passing is fasthttp.ErrTimeout, and the
// node is told to give up (a cancel frame); a deadline passed already
// is fasthttp.ErrTimeout at once, nothing sent, as the pool's. A request
// not sent on the link is ErrNotTaken; one written and lost is a
// *LostError.
func (c *Conn) Do(req *fasthttp.Request, resp *fasthttp.Response, deadline time.Time, max int) error {
	if !deadline.IsZero() && time.Until(deadline) <= 0 {
		return fasthttp.ErrTimeout
	}
	if req.IsBodyStream() || len(req.Body()) > c.maxBody {
		return ErrNotTaken
	}
	buf, err := encodeRequest(req)
	if err != nil {
		return err
	}
	if len(buf)-headerSize-len(req.Body()) > c.maxHead {
		putBuf(buf)
		return ErrNotTaken
	}
	cl := &call{max: max, answer: make(chan []byte, 1)}
	c.mu.Lock()
	if c.err != nil || len(c.calls) >= c.maxRequests {
		c.mu.Unlock()
		putBuf(buf)
		return ErrNotTaken
	}
	c.next++
	cl.id = c.next
	if len(c.calls) == 0 {
		c.busy = time.Now()
	}
	c.calls[cl.id] = cl
	c.lastSend = time.Now()
	c.mu.Unlock()
	putHeader(buf, len(buf)-headerSize, cl.id, kindRequest)
	if !c.w.send(frame{buf: buf, owner: cl}) {
		putBuf(buf)
		c.forget(cl)
		return ErrNotTaken
	}
	var timeout <-chan time.Time
	if !deadline.IsZero() {
		t := fasthttp.AcquireTimer(time.Until(deadline)) // pooled, as the pool's own waits are
		defer fasthttp.ReleaseTimer(t)
		timeout = t.C
	}
	select {
	case p := <-cl.answer:
		return c.readAnswer(p, req, resp, max)
	case <-timeout:
		if p, ok := c.giveUp(cl); ok {
			return c.readAnswer(p, req, resp, max)
		}
		return fasthttp.ErrTimeout
	case <-c.done:
		select {
		case p := <-cl.answer: // it came just before the end
			return c.readAnswer(p, req, resp, max)
		default:
		}
		if cl.state.Load() == written {
			return &LostError{Err: c.reason()}
		}
		return ErrNotTaken
	}
}

func (c *Conn) reason() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Conn) forget(cl *call) {
	c.mu.Lock()
	delete(c.calls, cl.id)
	c.mu.Unlock()
}

// giveUp withdraws cl after its deadline: a frame not yet written never
// will be; a written one is cancelled at the node, and stays counted in
// flight until the node's answer comes (which is then dropped). If the
// answer came meanwhile, giveUp returns it.
func (c *Conn) giveUp(cl *call) ([]byte, bool) {
	c.mu.Lock()
	if _, ok := c.calls[cl.id]; !ok {
		c.mu.Unlock()
		select {
		case p := <-cl.answer:
			return p, true
		default:
			return nil, false // the link ended
		}
	}
	if cl.state.CompareAndSwap(queued, withdrawn) {
		delete(c.calls, cl.id)
		c.mu.Unlock()
		return nil, false
	}
	cl.abandoned = true
	c.mu.Unlock()
	buf := getBuf(headerSize)
	putHeader(buf, 0, cl.id, kindCancel)
	if !c.w.send(frame{buf: buf}) {
		putBuf(buf)
	}
	return nil, false
}

// encPool holds encoders of requests and answers into frames.
var encPool = sync.Pool{New: func() any { a := &appender{}; return &encoder{a: a, bw: bufio.NewWriterSize(a, 4<<10)} }}

type encoder struct {
	a  *appender
	bw *bufio.Writer
}

// encode returns a frame buffer (its header left to fill) holding what
// write writes, at most limit bytes of payload (0: any), ending with
// errGone once gone (nil: never) says so.
func encode(write func(*bufio.Writer) error, sizeHint, limit int, gone func() bool) ([]byte, error) {
	e := encPool.Get().(*encoder)
	defer encPool.Put(e)
	e.a.b = getBuf(headerSize + sizeHint)[:headerSize]
	e.a.limit = 0
	if limit > 0 {
		e.a.limit = headerSize + limit
	}
	e.a.gone = gone
	defer func() { e.a.gone = nil }()
	e.bw.Reset(e.a)
	err := write(e.bw)
	if err == nil {
		err = e.bw.Flush()
	}
	buf := e.a.b
	e.a.b = nil
	if err != nil {
		putBuf(buf)
		return nil, err
	}
	return buf, nil
}

func encodeRequest(req *fasthttp.Request) ([]byte, error) {
	return encode(req.Write, 512+len(req.Body()), 0, nil)
}

// readerPool holds the readers that parse a frame's payload.
var readerPool = sync.Pool{New: func() any { r := &bytes.Reader{}; return &payloadReader{r: r, br: bufio.NewReaderSize(r, 4<<10)} }}

type payloadReader struct {
	r  *bytes.Reader
	br *bufio.Reader
}

// readAnswer parses an answer frame's payload p into resp and frees p.
// An answer that does not parse ends the link: the node broke the
// protocol (the request was sent: it may have been applied).
func (c *Conn) readAnswer(p []byte, req *fasthttp.Request, resp *fasthttp.Response, max int) error {
	if p == nil {
		return &TooLargeError{Limit: max, Stated: -1}
	}
	defer putBuf(p)
	pr := readerPool.Get().(*payloadReader)
	defer readerPool.Put(pr)
	pr.r.Reset(p)
	pr.br.Reset(pr.r)
	skip := resp.SkipBody
	resp.SkipBody = skip || req.Header.IsHead() // a HEAD's answer states a length it does not send
	err := resp.ReadLimitBody(pr.br, max)
	resp.SkipBody = skip
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return &TooLargeError{Limit: max, Stated: resp.Header.ContentLength()}
	case err != nil:
		err = fmt.Errorf("%w: an answer that does not parse: %v", ErrGarbage, err)
		c.end(err)
		return &LostError{Err: err}
	}
	return nil
}

// read reads answer frames and hands each to its call, until the link
// ends.
func (c *Conn) read() {
	c.end(c.readFrames())
}

func (c *Conn) readFrames() error {
	wait := c.idle // how long a read waits before the link is judged
	if c.keepAlive > 0 && (wait == 0 || c.keepAlive < wait) {
		wait = c.keepAlive
	}
	payloadWait := max(c.idle, silentAfter*c.keepAlive)
	for {
		if wait > 0 {
			_ = c.conn.SetReadDeadline(time.Now().Add(wait))
		}
		n, id, k, err := peekHeader(c.br)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if c.silent() {
					return errSilent
				}
				if !c.idleNow() {
					continue
				}
			}
			return err
		}
		c.heard.Store(time.Now().UnixNano())
		if payloadWait > 0 && c.br.Buffered() < n { // the payload's own deadline: the header's may be about to pass
			_ = c.conn.SetReadDeadline(time.Now().Add(payloadWait))
		}
		if k == kindPing {
			if n != 0 || id != 0 {
				return garbage("a keep-alive frame with an id or a payload")
			}
			continue
		}
		if k != kindAnswer {
			return garbage("a frame of kind %d from the node", k)
		}
		c.mu.Lock()
		cl := c.calls[id]
		delete(c.calls, id)
		abandoned := cl != nil && cl.abandoned
		c.mu.Unlock()
		if cl == nil {
			return garbage("an answer to request %d, which is not in flight", id)
		}
		if abandoned || n > cl.max+answerHead {
			if _, err := c.br.Discard(n); err != nil {
				return err
			}
			if !abandoned {
				cl.answer <- nil
			}
			continue
		}
		p, err := readPayload(c.br, n)
		if err != nil {
			return err
		}
		c.heard.Store(time.Now().UnixNano())
		cl.answer <- p
	}
}

// idleNow reports whether the link has been idle for its idle timeout
// (nothing in flight, nothing sent), and if so ends its taking requests.
func (c *Conn) idleNow() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == 0 || len(c.calls) > 0 || time.Since(c.lastSend) < c.idle {
		return false
	}
	if c.err == nil {
		c.err = errIdle // no request is taken from here on; end closes the rest
	}
	return true
}

var errIdle = errors.New("shardlink: the link was idle")

// silentAfter is how many of the node's keep-alive intervals a link with
// requests waiting may hear nothing before it is judged gone.
const silentAfter = 3

// errSilent ends a link whose node has sent nothing at all for
// silentAfter keep-alive intervals while requests waited on it: the node
// is frozen, or the path to it drops packets without a reset, and TCP
// would wait for ever. A node merely slow to answer still sends
// keep-alives.
var errSilent = errors.New("shardlink: the node sent nothing while requests waited")

// silent reports whether the link has requests in flight (cancelled ones
// too: the node owes their answers) and has read nothing for silentAfter
// keep-alive intervals since the later of its last frame and the moment
// it last became busy.
func (c *Conn) silent() bool {
	if c.keepAlive == 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.calls) == 0 {
		return false
	}
	since := time.Unix(0, c.heard.Load())
	if c.busy.After(since) {
		since = c.busy
	}
	return time.Since(since) >= silentAfter*c.keepAlive
}
