package credittest

import (
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// WSMessage is one graphql-transport-ws message.
type WSMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// WSConn is a graphql-transport-ws client connection to /graphql, for tests.
type WSConn struct {
	*websocket.Conn
	// Closed is the close the server sent, once a read saw it.
	Closed *websocket.CloseError
}

// WSOptions tune DialWS.
type WSOptions struct {
	// Origin is the handshake's Origin header; empty sends none.
	Origin string
	// ReadBuffer, when set, is the socket's receive buffer (a client that does not read fills
	// it sooner).
	ReadBuffer int
	// Header is sent with the handshake.
	Header http.Header
	// AfterEvent, when not nil, is connection_init's afterEvent (MustDialWS): the position the
	// connection resumes from (contract §16, amended 2026-11-28).
	AfterEvent any
}

// DialWS opens a WebSocket to base's /graphql with the graphql-transport-ws subprotocol; it
// returns the handshake's response and error when the handshake fails.
func DialWS(tb testing.TB, base string, o WSOptions) (*WSConn, *http.Response, error) {
	tb.Helper()
	d := websocket.Dialer{Subprotocols: []string{"graphql-transport-ws"}, HandshakeTimeout: 10 * time.Second}
	if o.ReadBuffer > 0 {
		d.NetDial = func(network, addr string) (net.Conn, error) {
			c, err := net.Dial(network, addr)
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetReadBuffer(o.ReadBuffer)
			}
			return c, err
		}
	}
	h := http.Header{}
	for k, v := range o.Header {
		h[k] = v
	}
	if o.Origin != "" {
		h.Set("Origin", o.Origin)
	}
	c, resp, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/graphql", h)
	if err != nil {
		return nil, resp, err
	}
	conn := &WSConn{Conn: c}
	tb.Cleanup(func() { c.Close() })
	return conn, resp, nil
}

// MustDialWS opens a WebSocket and sends connection_init with the key, expecting the ack.
func MustDialWS(tb testing.TB, base, key string, o WSOptions) *WSConn {
	tb.Helper()
	c, resp, err := DialWS(tb, base, o)
	if err != nil {
		status := 0
		if resp != nil {
			status = resp.StatusCode
		}
		tb.Fatalf("dial: %v (status %d)", err, status)
	}
	init := map[string]any{"Authorization": "Bearer " + key}
	if o.AfterEvent != nil {
		init["afterEvent"] = o.AfterEvent
	}
	payload, err := json.Marshal(init)
	if err != nil {
		tb.Fatal(err)
	}
	c.Send(tb, WSMessage{Type: "connection_init", Payload: payload})
	if m := c.Read(tb, 10*time.Second); m == nil || m.Type != "connection_ack" {
		tb.Fatalf("after connection_init: %+v, close %v", m, c.Closed)
	}
	return c
}

// Send writes one message.
func (c *WSConn) Send(tb testing.TB, m WSMessage) {
	tb.Helper()
	if err := c.WriteJSON(m); err != nil {
		tb.Fatalf("send %s: %v", m.Type, err)
	}
}

// Subscribe sends a subscribe message with the query and variables.
func (c *WSConn) Subscribe(tb testing.TB, id, query string, variables map[string]any) {
	tb.Helper()
	payload, _ := json.Marshal(map[string]any{"query": query, "variables": variables})
	c.Send(tb, WSMessage{Type: "subscribe", ID: id, Payload: payload})
}

// Read returns the next message other than ping and pong (answering pings), or nil when the
// connection closed (Closed then holds the server's close, if it sent one) or nothing came
// within timeout.
func (c *WSConn) Read(tb testing.TB, timeout time.Duration) *WSMessage {
	tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		_ = c.SetReadDeadline(deadline)
		var m WSMessage
		_, raw, err := c.ReadMessage()
		if err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				c.Closed = ce
			}
			return nil
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			tb.Fatalf("message %q: %v", raw, err)
		}
		switch m.Type {
		case "ping":
			_ = c.WriteJSON(WSMessage{Type: "pong"})
			continue
		case "pong":
			continue
		}
		return &m
	}
}

// SubscriptionEvent is an event as the tests' subscriptions select it.
type SubscriptionEvent struct {
	ID   string `json:"id"`
	Type string `json:"type"`
}

// EventsSubscription is the subscription the tests run.
const EventsSubscription = `subscription($after: ID, $types: [String!]) { events(afterEvent: $after, types: $types) { id type } }`

// NextEvent decodes a next message's event; it fails the test on another message.
func NextEvent(tb testing.TB, m *WSMessage) SubscriptionEvent {
	tb.Helper()
	if m == nil || m.Type != "next" {
		tb.Fatalf("want a next message, got %+v", m)
	}
	var p struct {
		Data   struct{ Events SubscriptionEvent }
		Errors []struct {
			Message    string
			Extensions map[string]any
		}
	}
	if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
		tb.Fatalf("next message %s: %v", m.Payload, err)
	}
	return p.Data.Events
}

// ErrorCodes returns the extensions.code of each error of an error message's payload (a list)
// or of a next message's payload (an object with errors).
func ErrorCodes(m *WSMessage) []string {
	if m == nil {
		return nil
	}
	var list []struct{ Extensions map[string]any }
	if json.Unmarshal(m.Payload, &list) != nil {
		var obj struct {
			Errors []struct{ Extensions map[string]any }
		}
		_ = json.Unmarshal(m.Payload, &obj)
		list = obj.Errors
	}
	var codes []string
	for _, e := range list {
		code, _ := e.Extensions["code"].(string)
		codes = append(codes, code)
	}
	return codes
}
