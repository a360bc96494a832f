package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The streaming side of /graphql (contract §16): subscriptions over gqlgen's own WebSocket
// (graphql-transport-ws) and Server-Sent Events (graphql-sse, distinct connections)
// transports. What gqlgen does not offer is added around it, at the byte level, without
// changing its protocol handling:
//
//   - the end of a stream whose key stopped working: on a WebSocket the operation's error
//     message and then the close with code 4401 (gqlgen closes with 1000; the connection
//     below it rewrites that close frame), over SSE a last next message with the error before
//     gqlgen's complete;
//   - a bounded wait for a slow reader: each write has a deadline (StreamOptions.WriteTimeout);
//     a client that does not read until its socket's buffer is full is cut off
//     (slow_consumer) and the connection closed, so it holds no goroutine or memory, and
//     other subscribers never wait for it (each has its own goroutines; none shares a buffer).

// WebSocket close codes of graphql-transport-ws that creditd sends.
const (
	closeUnauthenticated = 4401
	closeRateLimited     = 4429
	// closeServiceRestart is RFC 6455's 1012: the instance is shutting down, connect again.
	// graphql-ws retries after it and re-subscribes from connectionParams' position.
	closeServiceRestart = 1012
)

// ErrServiceRestart is the cause with which a server ends a WebSocket handshake's context when it
// shuts down: the WebSocket is then closed with 1012 (service restart) and no complete, so the
// client's own retry resumes its subscriptions, here once the instance is back or on another
// (contract §16, amended 2026-11-28).
var ErrServiceRestart = errors.New("the service is restarting")

// sendBuffer is a WebSocket's socket send buffer (the kernel doubles it for its bookkeeping).
const sendBuffer = 32 << 10

// Defaults of StreamOptions.
const (
	DefaultKeepAlive    = 15 * time.Second
	DefaultWriteTimeout = 10 * time.Second
)

// StreamOptions configure the subscription transports.
type StreamOptions struct {
	// Authenticate resolves the Authorization value of a WebSocket's connection_init payload
	// (else of its handshake) into the viewer's context, by the rules of the HTTP API's
	// authentication (server: the failed-authentication limit too). Nil refuses every
	// WebSocket.
	Authenticate func(ctx context.Context, r *http.Request, authorization string) (context.Context, error)
	// Charge counts the start of a subscription on a WebSocket as one request of the store's
	// rate limit, returning rate_limited when it is spent. An SSE subscription is its own HTTP
	// request, counted by the HTTP middleware. Nil charges nothing.
	Charge func(ctx context.Context) error
	// KeepAlive is the interval of pings (WebSocket; a client that answers none within two is
	// disconnected) and of comment lines (SSE). Zero means DefaultKeepAlive.
	KeepAlive time.Duration
	// WriteTimeout is how long one write may wait for the client to read before it is cut
	// off as a slow consumer. Zero means DefaultWriteTimeout.
	WriteTimeout time.Duration
}

// stream is the state of one streaming connection: a WebSocket (ws set) or one SSE request
// (sse set).
type stream struct {
	charge func(ctx context.Context) error
	ws     *wsConn
	sse    *sseWriter

	// resume is the position the connection carries (contract §16, amended 2026-11-28):
	// connection_init's afterEvent on a WebSocket, the Last-Event-ID header over SSE; nil when
	// none. resumeParam names it in errors.
	resume      any
	resumeParam string
}

// position returns the connection's position for the subscription of ctx, as
// credit.Events.Subscribe takes it: connection_init's afterEvent when it is one event ID (for
// every subscription of the connection), or its member named by the subscription's ID when it
// is an object (a position per subscription, contract §16 amended 2026-11-28); Last-Event-ID
// over SSE.
//
// Errors: invalid_parameter naming the connection's input, when it (or the subscription's
// member) is neither an event ID nor absent.
func (st *stream) position(ctx context.Context) (string, error) {
	switch v := st.resume.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case map[string]any:
		id := subscriptionID(ctx)
		switch p := v[id].(type) {
		case nil:
			return "", nil
		case string:
			return p, nil
		}
		return "", credit.ParamErrorf(credit.CodeInvalidParameter, st.resumeParam,
			"%s[%q] must be the ID of the last event subscription %s received (a string), or absent", st.resumeParam, id, id)
	default:
		return "", credit.ParamErrorf(credit.CodeInvalidParameter, st.resumeParam,
			"%s must be the ID of the last event received (a string), an object from subscription IDs to such IDs, or absent", st.resumeParam)
	}
}

type streamKey struct{}

// subscriptionIDExtension is the member of an operation's extensions that carries the ID the
// client gave its subscribe message: the position a connection_init may carry per subscription
// (contract §16, amended 2026-11-28) is keyed by that ID. The graphql-transport-ws transport
// sets it over whatever the client sent under that name.
const subscriptionIDExtension = "creditdSubscriptionId"

// subscriptionID is the ID the client gave the operation of ctx on a graphql-transport-ws
// WebSocket (subscriptionIDExtension); "" elsewhere.
func subscriptionID(ctx context.Context) string {
	if !graphql.HasOperationContext(ctx) {
		return ""
	}
	id, _ := graphql.GetOperationContext(ctx).Extensions[subscriptionIDExtension].(string)
	return id
}

func streamFrom(ctx context.Context) *stream {
	st, _ := ctx.Value(streamKey{}).(*stream)
	return st
}

// ServeWebSocket serves a WebSocket handshake on /graphql and returns once it is answered; the
// connection is then served on goroutines of its own, and done is called once it has closed
// and its operations have ended (at once when the handshake fails). The caller has checked the
// handshake's Origin; the key is checked in connection_init. A client that offers
// graphql-transport-ws is served by creditd's own transport (ws.go); one that offers the older
// graphql-ws protocol, or none, by gqlgen's.
func (h *Handler) ServeWebSocket(w http.ResponseWriter, r *http.Request, done func()) {
	conn := &wsConn{events: h.svc.Events, timeout: h.streamOpts.WriteTimeout, req: r.Context()}
	st := &stream{charge: h.streamOpts.Charge, ws: conn}
	r = r.WithContext(context.WithValue(r.Context(), streamKey{}, st))
	if ownsWebSocket(r) {
		h.serveTransportWS(w, r, st, done)
		return
	}
	defer done()
	h.websocket(r).Do(&hijackWriter{ResponseWriter: w, conn: conn}, r, freshLoaders{h: h}.executor(h.streams))
}

// ServeSSE serves a subscription over Server-Sent Events: a POST of /graphql that accepts
// text/event-stream, authenticated and counted by the HTTP middleware.
func (h *Handler) ServeSSE(w http.ResponseWriter, r *http.Request) {
	// The body follows the rules of every request body, as on POST /graphql.
	body, err := httpapi.ReadBody(w, r)
	if err == nil {
		_, _, err = checkEnvelope(body)
	}
	if err != nil {
		WriteError(w, r, err)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	rc := http.NewResponseController(w)
	// The server's read timeout would end the stream: nothing more is read from the client.
	_ = rc.SetReadDeadline(time.Time{})
	sw := &sseWriter{ResponseWriter: w, rc: rc, timeout: h.streamOpts.WriteTimeout, cancel: cancel, events: h.svc.Events}
	st := &stream{sse: sw, resumeParam: "Last-Event-ID"}
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		st.resume = id
	}
	ctx = graphql.StartOperationTrace(context.WithValue(ctx, streamKey{}, st))
	transport.SSE{KeepAlivePingInterval: h.streamOpts.KeepAlive}.Do(sw, r.WithContext(ctx), freshLoaders{h: h}.executor(h.streams))
	sw.pauseBeforeEnd()
}

// websocket is gqlgen's WebSocket transport for one handshake (the graphql-ws protocol).
func (h *Handler) websocket(r *http.Request) transport.Websocket {
	return transport.Websocket{
		Upgrader: websocket.Upgrader{
			// The caller checked the Origin (contract §16).
			CheckOrigin: func(*http.Request) bool { return true },
			// Buffers only while writing, so an idle subscriber holds none.
			WriteBufferPool: &wsWriteBuffers,
		},
		InitTimeout:      wsInitTimeout,
		PingPongInterval: h.streamOpts.KeepAlive,
		InitFunc: func(ctx context.Context, payload transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			ctx, err := h.websocketInit(ctx, r, payload)
			return ctx, nil, err
		},
	}
}

// websocketInit authenticates a WebSocket's connection_init: the Authorization of its payload,
// else of the handshake r. A refusal sets the close that follows: 4401 (unauthenticated) or
// 4429 (the failed-authentication limit). The context returned carries the viewer and ends
// with the stream's cancelConn.
func (h *Handler) websocketInit(ctx context.Context, r *http.Request, payload transport.InitPayload) (context.Context, error) {
	auth := h.streamOpts.Authenticate
	st := streamFrom(ctx)
	authorization := payload.Authorization()
	if authorization == "" {
		authorization = r.Header.Get("Authorization")
	}
	if auth == nil {
		st.ws.closeWith(closeUnauthenticated, "unauthenticated")
		return nil, credit.ErrUnauthenticated()
	}
	ctx, err := auth(ctx, r, authorization)
	if err != nil {
		if credit.CodeOf(err) == credit.CodeUnauthenticated {
			st.ws.closeWith(closeUnauthenticated, "unauthenticated")
		} else {
			st.ws.closeWith(closeRateLimited, string(credit.CodeOf(err)))
		}
		return nil, err
	}
	// The connection's position, for every subscription it carries (contract §16, amended
	// 2026-11-28): graphql-ws evaluates connectionParams at each connect.
	st.resume, st.resumeParam = payload["afterEvent"], "afterEvent"
	ctx, cancel := context.WithCancel(ctx)
	st.ws.setCancel(cancel)
	return ctx, nil
}

// freshLoaders gives each message of a subscription loaders of its own: a loader caches what
// it read for its request, and a stream's messages must show the records as they are when
// each is sent.
type freshLoaders struct {
	h    *Handler
	exec graphql.GraphExecutor
}

func (f freshLoaders) executor(exec graphql.GraphExecutor) graphql.GraphExecutor {
	f.exec = exec
	return f
}

func (f freshLoaders) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	return f.exec.CreateOperationContext(ctx, params)
}

func (f freshLoaders) DispatchError(ctx context.Context, list gqlerror.List) *graphql.Response {
	return f.exec.DispatchError(ctx, list)
}

func (f freshLoaders) DispatchOperation(ctx context.Context, oc *graphql.OperationContext) (graphql.ResponseHandler, context.Context) {
	// Only the subscription's resolver runs here, which loads nothing in batches: the loaders
	// are each response's, and the operation, which lasts as long as its stream, keeps none.
	next, inner := f.exec.DispatchOperation(ctx, oc)
	if inner == nil {
		// An operation middleware refused the operation (onlySubscriptions) without calling the
		// next one, which leaves no context; the transport still needs one.
		inner = ctx
	}
	return func(ctx context.Context) *graphql.Response {
		if ctx == nil {
			ctx = inner
		}
		return next(withLoaders(ctx, newLoaders(f.h.svc)))
	}, inner
}

// hijackWriter hands gorilla/websocket the connection below the response, wrapped in a
// wsConn.
type hijackWriter struct {
	http.ResponseWriter
	conn *wsConn
	// reader, when set, is the buffered reader handed over in place of the HTTP server's.
	reader *bufio.Reader
}

func (w *hijackWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	c, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	// The server's request deadlines end with the request; the stream sets its own.
	_ = c.SetDeadline(time.Time{})
	if tc, ok := c.(*net.TCPConn); ok {
		// The send buffer is bounded: a client that stops reading fills it, and its next
		// write's deadline cuts it off, instead of the kernel buffering megabytes for it.
		_ = tc.SetWriteBuffer(sendBuffer)
	}
	w.conn.Conn = c
	if w.reader != nil && rw.Reader.Buffered() == 0 {
		// gorilla/websocket reads through a reader of the caller's (it refuses a handshake
		// whose client sent more before the answer, as it did).
		w.reader.Reset(w.conn)
		rw = bufio.NewReadWriter(w.reader, rw.Writer)
	}
	return w.conn, rw, nil
}

func (w *hijackWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wsConn is a WebSocket's TCP connection: each write has a deadline (a slow consumer is cut
// off), and the close frame gqlgen writes is replaced by one with the code and reason set by
// closeWith.
type wsConn struct {
	net.Conn
	events  Events // counts the streams cut off
	timeout time.Duration
	// req is the handshake's context: ended with the cause ErrServiceRestart, the connection
	// closes with 1012 whatever closes it.
	req context.Context

	mu     sync.Mutex
	code   int
	reason string
	cancel context.CancelFunc

	cut atomic.Bool

	// The byte awaitRead read, or its error, for the next Read.
	peek    [1]byte
	peeked  bool
	peekErr error
}

// awaitRead waits for the client's next byte and keeps it for Read: an idle connection's reader
// waits here, a few calls deep, rather than inside gorilla/websocket's frame reader, so that its
// goroutine's stack shrinks to a few KB. Only the reading goroutine calls it.
func (c *wsConn) awaitRead() {
	n, err := c.Conn.Read(c.peek[:])
	c.peeked, c.peekErr = n == 1, err
}

func (c *wsConn) Read(b []byte) (int, error) {
	if c.peeked && len(b) > 0 {
		c.peeked = false
		b[0] = c.peek[0]
		return 1, nil
	}
	if err := c.peekErr; err != nil {
		c.peekErr = nil
		return 0, err
	}
	return c.Conn.Read(b)
}

// closeWith sets the code and reason of the connection's close.
func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	c.code, c.reason = code, reason
	c.mu.Unlock()
}

func (c *wsConn) setCancel(cancel context.CancelFunc) {
	c.mu.Lock()
	c.cancel = cancel
	c.mu.Unlock()
}

// cancelConn closes the connection through gqlgen (its context's end), with the close set by
// closeWith.
func (c *wsConn) cancelConn() {
	c.mu.Lock()
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

func (c *wsConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	code, reason := c.code, c.reason
	c.mu.Unlock()
	if code == 0 && c.req != nil && errors.Is(context.Cause(c.req), ErrServiceRestart) {
		code, reason = closeServiceRestart, "service restart"
	}
	if code == closeServiceRestart && !isCloseFrame(b) {
		// A restart ends the operations as their connection closes, racing its close frame:
		// gqlgen completes each as it ends, and a complete would tell graphql-ws never to
		// subscribe again; an event being resolved as the context ends is sent with an
		// internal error in place of its fields (its company), which the client would take
		// as received. So nothing but the close leaves (contract §16, amended 2026-11-28):
		// the client resumes after the last event it did receive. gorilla/websocket writes a
		// frame in one call, so no frame is cut.
		return len(b), nil
	}
	if code != 0 && isCloseFrame(b) {
		frame := append([]byte{0x88, byte(2 + len(reason)), byte(code >> 8), byte(code)}, reason...)
		if _, err := c.write(frame); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return c.write(b)
}

// SetWriteDeadline does nothing: every write sets its own deadline (write), and
// gorilla/websocket, which clears the deadline before each frame it writes, would otherwise
// reset the connection's timer twice a message.
func (c *wsConn) SetWriteDeadline(time.Time) error { return nil }

func (c *wsConn) write(b []byte) (int, error) {
	_ = c.Conn.SetWriteDeadline(time.Now().Add(c.timeout))
	n, err := c.Conn.Write(b)
	var ne net.Error
	if err != nil && errors.As(err, &ne) && ne.Timeout() && c.cut.CompareAndSwap(false, true) {
		c.events.NoteCutOff("slow_consumer")
		_ = c.Conn.Close()
	}
	return n, err
}

// isCloseFrame reports whether b is one whole unmasked close frame with a short payload, as
// gorilla/websocket writes it in one call.
func isCloseFrame(b []byte) bool {
	return len(b) >= 2 && b[0] == 0x88 && b[1] < 126 && int(b[1]) == len(b)-2
}

// sseWriter is an SSE response: each write and flush has a deadline (a slow consumer is cut
// off and the request's context ended), and a last message set by final is written before
// gqlgen's complete.
type sseWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	cancel  context.CancelFunc
	events  Events // counts the streams cut off

	mu     sync.Mutex
	last   []byte
	broken bool
	// ids are the event IDs of the next messages gqlgen is yet to write, in order: the pump
	// queues an event's ID before handing the event over, and each next message takes the
	// first as its SSE id: field (EventSource and graphql-sse send it back as Last-Event-ID).
	ids []string
	// restart drops every message still to come, the complete too: the service is shutting
	// down, and the client's own retry resumes the stream from its last id: (contract §16,
	// amended 2026-11-28).
	restart bool
	// flushed is when the last message left (the last successful flush).
	flushed time.Time
}

// restartPause is how long a stream ended for a restart stays open after its last message.
// graphql-sse's client (2.6.1, distinct connections mode) retries a stream that ends without
// complete only when the end reaches it while the subscription waits for its next message;
// when the end arrives in the same read as the last message, it delivers that message and then
// waits forever, neither retrying nor reporting an error. A pause between the last message and
// the end lets the page take the message and wait again before the end comes. It is long enough
// for a busy browser or a proxy between that forwards late (250 ms was not, under the race
// detector's load in the browser test), and short beside the shutdown's 10 s for streams.
const restartPause = time.Second

// pauseBeforeEnd holds a stream ended for a restart open until restartPause has passed since
// its last message, so that its end arrives apart from it (restartPause).
func (w *sseWriter) pauseBeforeEnd() {
	w.mu.Lock()
	restart, broken, flushed := w.restart, w.broken, w.flushed
	w.mu.Unlock()
	if !restart || broken || flushed.IsZero() {
		return
	}
	if d := time.Until(flushed.Add(restartPause)); d > 0 {
		time.Sleep(d)
	}
}

// queueID sets the SSE id: of the next message still unwritten that carries no ID yet.
func (w *sseWriter) queueID(id string) {
	w.mu.Lock()
	w.ids = append(w.ids, id)
	w.mu.Unlock()
}

// endForRestart ends the stream without its complete message.
func (w *sseWriter) endForRestart() {
	w.mu.Lock()
	w.restart = true
	w.mu.Unlock()
	w.cancel()
}

var (
	sseComplete = []byte("event: complete\n\n")
	sseNext     = []byte("event: next\n")
	sseID       = []byte("id: ")
)

var errStreamBroken = errors.New("stream cut off")

// final sets the last message: a next holding err.
func (w *sseWriter) final(err *gqlerror.Error) {
	body, _ := json.Marshal(graphql.Response{Errors: gqlerror.List{err}})
	w.mu.Lock()
	w.last = append(append([]byte("event: next\ndata: "), body...), "\n\n"...)
	w.mu.Unlock()
}

func (w *sseWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return 0, errStreamBroken
	}
	out := b
	switch {
	case w.restart:
		// Neither the complete nor a next: an event being resolved as the stream ends comes
		// with an internal error in place of its fields, and the client would take it as
		// received. gqlgen writes each message in one call.
		return len(b), nil
	case w.last != nil && bytes.Equal(b, sseComplete):
		out = append(w.last, b...)
		w.last = nil
	case len(w.ids) > 0 && bytes.HasPrefix(b, sseNext):
		out = make([]byte, 0, len(b)+len(sseID)+len(w.ids[0])+1)
		out = append(append(append(append(out, sseNext...), sseID...), w.ids[0]...), '\n')
		out = append(out, b[len(sseNext):]...)
		w.ids = w.ids[1:]
	}
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	if _, err := w.ResponseWriter.Write(out); err != nil {
		w.cutOff(err)
		return 0, err
	}
	return len(b), nil
}

func (w *sseWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.broken {
		return
	}
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	if err := w.rc.Flush(); err != nil {
		w.cutOff(err)
		return
	}
	w.flushed = time.Now()
}

// cutOff ends a stream whose write failed; w.mu is held.
func (w *sseWriter) cutOff(err error) {
	w.broken = true
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		w.events.NoteCutOff("slow_consumer")
	}
	w.cancel()
}

func (w *sseWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
