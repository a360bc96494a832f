package graph

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/gorilla/websocket"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/creditd/creditd/credit"
)

// The graphql-transport-ws protocol (contract §16), served by creditd itself over
// gorilla/websocket and run through the same executor as gqlgen's transport, with gqlgen's
// messages, closes and keep-alive: what differs is what an idle subscription holds (issue 40).
// gqlgen's transport keeps the HTTP handler's goroutine (and with it the HTTP server's buffers
// of the connection) as its reader, and a goroutine each for its pings and its close; here the
// HTTP handler returns once the connection is upgraded, one small goroutine reads, and the pings
// and the close are timers and context callbacks that run only when they fire. A subscription
// holds one goroutine, its operation's, which runs the stream's pump (inlinePump) and writes
// its messages.

const graphqlTransportWS = "graphql-transport-ws"

// wsInitTimeout is how long a WebSocket may wait before its connection_init.
const wsInitTimeout = 10 * time.Second

// wsReadBuffer is the reader's buffer of a WebSocket: frame headers and control frames go
// through it; a longer message is read past it. gorilla/websocket takes a reader of more than
// 256 bytes as it is.
const wsReadBuffer = 320

// wsWriteBuffers are the WebSockets' write buffers, taken only while a message is written.
var wsWriteBuffers sync.Pool

// ownsWebSocket reports whether r's handshake is one the graphql-transport-ws transport takes:
// the client offers graphql-transport-ws and not graphql-ws (the older protocol, which gqlgen
// would choose first and still serves).
func ownsWebSocket(r *http.Request) bool {
	protocols := websocket.Subprotocols(r)
	return slices.Contains(protocols, graphqlTransportWS) && !slices.Contains(protocols, "graphql-ws")
}

// wsMessage is one graphql-transport-ws message, its members in gqlgen's order.
type wsMessage struct {
	Payload json.RawMessage `json:"payload,omitempty"`
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
}

// wsSession is one graphql-transport-ws connection.
type wsSession struct {
	exec      graphql.GraphExecutor
	payloads  *payloadGroups
	conn      *websocket.Conn
	br        *bufio.Reader // conn's
	st        *stream
	keepAlive time.Duration
	// init authenticates connection_init (Handler.websocketInit); nil once it has run.
	init func(ctx context.Context, payload transport.InitPayload) (context.Context, error)
	done func()

	// ctx is the connection's context: the handshake's, then connection_init's (the viewer's).
	ctx context.Context

	mu           sync.Mutex // guards writes and what follows
	ops          map[string]context.CancelFunc
	closed       bool
	receivedPong bool
	ping         *time.Timer
	running      sync.WaitGroup // the operations' goroutines
}

// serveTransportWS upgrades r to a graphql-transport-ws WebSocket and serves it from a
// goroutine of its own; it returns once the handshake is answered. done is called once the
// connection has closed and its operations have ended.
func (h *Handler) serveTransportWS(w http.ResponseWriter, r *http.Request, st *stream, done func()) {
	up := websocket.Upgrader{
		// The caller checked the Origin (contract §16).
		CheckOrigin:     func(*http.Request) bool { return true },
		Subprotocols:    []string{graphqlTransportWS},
		WriteBufferPool: &wsWriteBuffers,
	}
	br := bufio.NewReaderSize(nil, wsReadBuffer)
	conn, err := up.Upgrade(&hijackWriter{ResponseWriter: w, conn: st.ws, reader: br}, r, nil)
	if err != nil {
		done() // gorilla/websocket answered the handshake
		return
	}
	s := &wsSession{br: br, exec: freshLoaders{h: h}.executor(h.streams), payloads: &h.payloads, conn: conn, st: st, keepAlive: h.streamOpts.KeepAlive,
		done: done, ctx: r.Context(), ops: map[string]context.CancelFunc{}}
	s.init = func(ctx context.Context, payload transport.InitPayload) (context.Context, error) {
		return h.websocketInit(ctx, r, payload)
	}
	go s.run()
}

// run reads the client's messages until the connection ends.
func (s *wsSession) run() {
	// The handshake's context ends with the server (ErrServiceRestart): the connection closes.
	stop := context.AfterFunc(s.ctx, s.terminate)
	defer func() {
		stop()
		if p := recover(); p != nil {
			s.close(websocket.CloseInternalServerErr, "internal error")
		}
		s.terminate()
		s.running.Wait()
		s.done()
	}()
	if !s.initialise() {
		return
	}
	// connection_init's context ends with cancelConn (stream.restart, stream.fail): the
	// connection closes, with the code closeWith set.
	stopInit := context.AfterFunc(s.ctx, s.terminate)
	defer stopInit()
	s.startPings()
	for {
		if s.br.Buffered() == 0 {
			s.st.ws.awaitRead()
		}
		m, err := s.next()
		if err != nil {
			return
		}
		switch m.Type {
		case "subscribe":
			s.subscribe(graphql.Now(), m)
		case "complete":
			s.mu.Lock()
			cancel := s.ops[m.ID]
			s.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		case "ping":
			s.send(wsMessage{Type: "pong", Payload: m.Payload})
		case "pong":
			s.mu.Lock()
			s.receivedPong = true
			s.mu.Unlock()
			_ = s.conn.SetReadDeadline(time.Time{})
		default: // connection_init again
			s.close(websocket.CloseProtocolError, "unexpected message")
			return
		}
	}
}

// terminate closes the connection as gqlgen does when its context ends.
func (s *wsSession) terminate() { s.close(websocket.CloseNormalClosure, "terminated") }

// errBadMessage is a message that is not a graphql-transport-ws message from a client.
var errBadMessage = errors.New("invalid message received")

// next reads the next message.
func (s *wsSession) next() (wsMessage, error) {
	_, data, err := s.conn.ReadMessage()
	if err != nil {
		return wsMessage{}, err
	}
	var m wsMessage
	if jsonDecode(data, &m) != nil {
		return wsMessage{}, errBadMessage
	}
	switch m.Type {
	case "connection_init", "subscribe", "complete", "ping", "pong":
		return m, nil
	}
	return wsMessage{}, errBadMessage
}

// initialise reads connection_init, authenticates it and acknowledges it; false closes the
// connection.
func (s *wsSession) initialise() bool {
	_ = s.conn.SetReadDeadline(time.Now().Add(wsInitTimeout))
	m, err := s.next()
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			s.close(websocket.CloseProtocolError, "connection initialisation timeout")
		} else {
			s.close(websocket.CloseProtocolError, "decoding error")
		}
		return false
	}
	if m.Type != "connection_init" {
		s.close(websocket.CloseProtocolError, "unexpected message")
		return false
	}
	var payload transport.InitPayload
	if len(m.Payload) > 0 {
		if err := json.Unmarshal(m.Payload, &payload); err != nil {
			s.close(websocket.CloseProtocolError, "decoding error")
			return false
		}
	}
	ctx, err := s.init(s.ctx, payload)
	s.init = nil
	if err != nil {
		s.close(websocket.CloseNormalClosure, "terminated")
		return false
	}
	s.ctx = ctx
	_ = s.conn.SetReadDeadline(time.Time{})
	s.send(wsMessage{Type: "connection_ack"})
	return true
}

// startPings sends a ping every keep-alive interval; a client that answers none within two is
// disconnected (its read deadline passes).
func (s *wsSession) startPings() {
	_ = s.conn.SetReadDeadline(time.Now().Add(2 * s.keepAlive))
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.ping = time.AfterFunc(s.keepAlive, s.pingNow)
	}
}

func (s *wsSession) pingNow() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.writeLocked(wsMessage{Type: "ping"})
	if s.receivedPong {
		_ = s.conn.SetReadDeadline(time.Now().Add(2 * s.keepAlive))
	}
	s.receivedPong = false
	s.ping.Reset(s.keepAlive)
}

// subscribe starts the operation of a subscribe message, on a goroutine of its own that writes
// its responses, then its complete (or its error).
func (s *wsSession) subscribe(start time.Time, m wsMessage) {
	ctx := graphql.StartOperationTrace(s.ctx)
	var params *graphql.RawParams
	if err := jsonDecode(m.Payload, &params); err != nil || params == nil {
		s.sendError(m.ID, &gqlerror.Error{Message: "invalid json"})
		s.complete(m.ID)
		return
	}
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	// gqlgen's transport also hands the operation the handshake's headers (RawParams.Headers),
	// which nothing here reads: an idle connection does not keep them.
	// The resolver finds the connection's position for this subscription by its ID
	// (stream.position).
	if params.Extensions == nil {
		params.Extensions = map[string]any{}
	}
	params.Extensions[subscriptionIDExtension] = m.ID

	rc, errs := s.exec.CreateOperationContext(ctx, params)
	if errs != nil {
		resp := s.exec.DispatchError(graphql.WithOperationContext(ctx, rc), errs)
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			s.sendError(m.ID, resp.Errors...)
		} else {
			s.sendResponse(m.ID, &graphql.Response{Errors: errs})
		}
		s.complete(m.ID)
		return
	}
	ctx = graphql.WithOperationContext(ctx, rc)
	ctx, cancel := context.WithCancel(ctx)
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		return
	}
	s.ops[m.ID] = cancel
	s.running.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.running.Done()
		failed := &subscriptionErrors{}
		ctx := context.WithValue(ctx, subscriptionErrorsKey{}, failed)
		pump := &inlinePump{}
		ctx = context.WithValue(ctx, inlinePumpKey{}, pump)
		var share *payloadMember // the operation's group of shared payloads, if it has one
		defer func() {
			if r := recover(); r != nil {
				err := rc.Recover(ctx, r)
				var gqlErr *gqlerror.Error
				if !errors.As(err, &gqlErr) {
					gqlErr = &gqlerror.Error{}
					if err != nil {
						gqlErr.Message = err.Error()
					}
				}
				s.sendError(m.ID, gqlErr)
			}
			if errs := failed.list(); len(errs) > 0 {
				s.sendError(m.ID, errs...)
			} else {
				s.complete(m.ID)
			}
			s.mu.Lock()
			delete(s.ops, m.ID)
			s.mu.Unlock()
			cancel()
			if pump.finish != nil {
				pump.finish()
			}
			share.leave()
		}()
		responses, ctx := s.exec.DispatchOperation(ctx, rc)
		if pump.step != nil {
			share = s.payloads.join(ctx, rc, pump.start)
		}
		next := nextFrame(m.ID)
		for {
			// The subscription's resolver has run: its pump, if it set one, hands over the
			// next event (its key confirmed), or ends the stream.
			if pump.step != nil && !pump.step() {
				pump.step = nil
			}
			if ev := pump.take(); ev != nil {
				if !s.sendEvent(ctx, ev, pump, share, responses, &next) {
					return
				}
				continue
			}
			resp := responses(ctx)
			if resp == nil {
				return
			}
			s.sendResponse(m.ID, resp)
		}
	}()
}

// sendEvent sends the next message of event ev, which pump handed over: the payload another
// subscriber of the group share executed, or else this operation's response to the event
// (responses, once pump delivered it). false when the operation has ended. It is apart from
// the operation's loop, whose frame stays on the stack while the subscription waits: small
// frames there let the idle goroutine's stack shrink to its least.
func (s *wsSession) sendEvent(ctx context.Context, ev *credit.Event, pump *inlinePump, share *payloadMember,
	responses graphql.ResponseHandler, frame *[2]string) bool {
	payload := share.payload(ctx, ev.Seq, func() ([]byte, bool) {
		pump.deliver(ev)
		resp := responses(ctx)
		if resp == nil {
			return nil, false
		}
		s.payloads.executed.Add(1)
		b, err := json.Marshal(resp)
		if err != nil {
			panic(err)
		}
		return b, shareableResponse(resp)
	})
	if payload == nil {
		return false
	}
	s.sendFrame(*frame, payload)
	return true
}

// nextFrame is how a next message of the operation id is written around its payload: the
// bytes before and after it, as send writes them (wsMessage's members in their order, a
// newline after). Not inlined: the operation's loop, which calls it, keeps a small frame
// (sendEvent).
//
//go:noinline
func nextFrame(id string) [2]string {
	b, _ := json.Marshal(id)
	return [2]string{`{"payload":`, `,"id":` + string(b) + `,"type":"next"}` + "\n"}
}

// frameBuffers hold a next message while it is assembled.
var frameBuffers = sync.Pool{New: func() any { return new([]byte) }}

// sendFrame writes a next message: around payload (a response's JSON, compact, as json.Marshal
// writes it) the bytes of frame (nextFrame). It is the message send would write, without
// encoding the payload again: one frame, written in one call.
func (s *wsSession) sendFrame(frame [2]string, payload []byte) {
	bp := frameBuffers.Get().(*[]byte)
	b := append(append(append((*bp)[:0], frame[0]...), payload...), frame[1]...)
	s.mu.Lock()
	if !s.closed {
		_ = s.conn.WriteMessage(websocket.TextMessage, b)
	}
	s.mu.Unlock()
	if cap(b) <= 64<<10 {
		*bp = b
		frameBuffers.Put(bp)
	}
}

// subscriptionErrors are the errors an operation ends with (addSubscriptionError): its last
// message is an error message holding them instead of a complete.
type subscriptionErrors struct {
	mu   sync.Mutex
	errs []*gqlerror.Error
}

func (e *subscriptionErrors) list() []*gqlerror.Error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.errs
}

type subscriptionErrorsKey struct{}

// addSubscriptionError has the operation of ctx end with err (an error message) rather than a
// complete, on either WebSocket transport.
func addSubscriptionError(ctx context.Context, err *gqlerror.Error) {
	if e, ok := ctx.Value(subscriptionErrorsKey{}).(*subscriptionErrors); ok {
		e.mu.Lock()
		e.errs = append(e.errs, err)
		e.mu.Unlock()
		return
	}
	transport.AddSubscriptionError(ctx, err)
}

func (s *wsSession) sendResponse(id string, resp *graphql.Response) {
	b, err := json.Marshal(resp)
	if err != nil {
		panic(err)
	}
	s.send(wsMessage{Type: "next", ID: id, Payload: b})
}

func (s *wsSession) sendError(id string, list ...*gqlerror.Error) {
	errs := make([]error, len(list))
	for i, err := range list {
		errs[i] = err
	}
	b, err := json.Marshal(errs)
	if err != nil {
		panic(err)
	}
	s.send(wsMessage{Type: "error", ID: id, Payload: b})
}

func (s *wsSession) complete(id string) { s.send(wsMessage{Type: "complete", ID: id}) }

// send writes m, as gqlgen does: JSON and a newline, in one text message.
func (s *wsSession) send(m wsMessage) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.writeLocked(m)
}

func (s *wsSession) writeLocked(m wsMessage) {
	if s.closed {
		return
	}
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(m); err != nil {
		return
	}
	_ = s.conn.WriteMessage(websocket.TextMessage, b.Bytes())
}

// close writes the close frame (wsConn gives it the code closeWith set), ends every operation
// and closes the connection; later calls do nothing.
func (s *wsSession) close(code int, text string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	_ = s.conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, text))
	for _, cancel := range s.ops {
		cancel()
	}
	s.closed = true
	if s.ping != nil {
		s.ping.Stop()
	}
	s.mu.Unlock()
	_ = s.conn.Close()
}

// jsonDecode decodes data as gqlgen's transports do: numbers kept as json.Number.
func jsonDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return dec.Decode(v)
}
