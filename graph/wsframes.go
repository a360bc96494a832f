package graph

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
)

// subscriptionIDExtension is the member of a subscribe message's extensions that carries the
// subscription's ID to its resolver: gqlgen's WebSocket transport gives a resolver the
// operation but not the ID the client gave it, and the position a connection_init may carry
// per subscription (contract §16, amended 2026-11-28) is keyed by that ID. wsConn writes it into
// every subscribe message as it reads it, over whatever the client sent under that name.
const subscriptionIDExtension = "creditdSubscriptionId"

// maxMarkedFrame bounds the client frames frameReader reads whole to mark: a bigger one (no
// graphql-transport-ws message of a well-behaved client is) passes through as it comes.
const maxMarkedFrame = 64 << 10

// frameReader rewrites the client's side of a WebSocket as it is read: each whole, unfragmented
// text frame holding a graphql-transport-ws subscribe message gets its ID copied into the
// payload's extensions (subscriptionIDExtension); every other byte passes unchanged. Client
// frames are masked (RFC 6455 §5.3); a rewritten one is sent on masked with a zero key, which
// leaves its payload as it is.
type frameReader struct {
	in   []byte // read from the connection, not yet a whole frame
	out  []byte // ready for gorilla/websocket
	pass uint64 // bytes of an oversized frame still to pass through as they come
}

// feed takes bytes read from the connection.
func (r *frameReader) feed(b []byte) {
	for len(b) > 0 {
		if r.pass > 0 && len(r.in) == 0 {
			n := uint64(len(b))
			if n > r.pass {
				n = r.pass
			}
			r.out = append(r.out, b[:n]...)
			r.pass -= n
			b = b[n:]
			continue
		}
		r.in = append(r.in, b...)
		b = nil
		r.frames()
	}
}

// frames moves every whole frame at the start of r.in to r.out, marked if it is a subscribe.
func (r *frameReader) frames() {
	for len(r.in) >= 2 {
		header, length, ok := frameHeader(r.in)
		if !ok {
			return // the header itself is incomplete
		}
		if length > maxMarkedFrame {
			have := uint64(len(r.in) - header)
			if have >= length {
				have = length
			}
			r.out = append(r.out, r.in[:header+int(have)]...)
			r.pass = length - have
			r.in = append(r.in[:0], r.in[header+int(have):]...)
			if r.pass > 0 {
				return
			}
			continue
		}
		end := header + int(length)
		if len(r.in) < end {
			return
		}
		r.out = append(r.out, markSubscribe(r.in[:end], header)...)
		r.in = r.in[end:]
	}
	if len(r.in) == 0 {
		r.in = nil
	}
}

// frameHeader returns the length of the frame header at the start of b and of its payload;
// ok is false while b does not hold the whole header.
func frameHeader(b []byte) (header int, length uint64, ok bool) {
	header = 2
	length = uint64(b[1] & 0x7f)
	switch length {
	case 126:
		header = 4
		if len(b) < header {
			return 0, 0, false
		}
		length = uint64(binary.BigEndian.Uint16(b[2:4]))
	case 127:
		header = 10
		if len(b) < header {
			return 0, 0, false
		}
		length = binary.BigEndian.Uint64(b[2:10])
	}
	if b[1]&0x80 != 0 {
		header += 4
	}
	return header, length, len(b) >= header
}

// markSubscribe returns frame, or, when it is a whole masked text frame holding a subscribe
// message, the same message with its ID in the payload's extensions, as a new frame.
func markSubscribe(frame []byte, header int) []byte {
	// FIN and opcode text, no extension bits, masked.
	if frame[0] != 0x81 || frame[1]&0x80 == 0 {
		return frame
	}
	mask := frame[header-4 : header]
	payload := make([]byte, len(frame)-header)
	for i := range payload {
		payload[i] = frame[header+i] ^ mask[i%4]
	}
	if !bytes.Contains(payload, []byte("subscribe")) {
		return frame
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(payload, &msg) != nil {
		return frame
	}
	var typ, id string
	if json.Unmarshal(msg["type"], &typ) != nil || typ != "subscribe" || json.Unmarshal(msg["id"], &id) != nil || id == "" {
		return frame
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["payload"], &params) != nil || params == nil {
		return frame // gqlgen answers a payload that is no object itself
	}
	extensions := map[string]any{}
	if raw, ok := params["extensions"]; ok && json.Unmarshal(raw, &extensions) != nil {
		return frame
	}
	if extensions == nil {
		extensions = map[string]any{}
	}
	extensions[subscriptionIDExtension] = id
	var err error
	if params["extensions"], err = json.Marshal(extensions); err != nil {
		return frame
	}
	if msg["payload"], err = json.Marshal(params); err != nil {
		return frame
	}
	marked, err := json.Marshal(msg)
	if err != nil {
		return frame
	}
	out := []byte{0x81}
	switch n := len(marked); {
	case n < 126:
		out = append(out, 0x80|byte(n))
	case n <= 0xffff:
		out = append(out, 0x80|126)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
	default:
		out = append(out, 0x80|127)
		out = binary.BigEndian.AppendUint64(out, uint64(n))
	}
	out = append(out, 0, 0, 0, 0) // a zero mask: the payload goes as it is
	return append(out, marked...)
}
