package graph

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"testing"
)

// clientFrame is a masked client frame (RFC 6455 §5.2) with the given first byte and payload.
func clientFrame(first byte, payload []byte, mask [4]byte) []byte {
	f := []byte{first}
	switch n := len(payload); {
	case n < 126:
		f = append(f, 0x80|byte(n))
	case n <= 0xffff:
		f = append(f, 0x80|126)
		f = binary.BigEndian.AppendUint16(f, uint16(n))
	default:
		f = append(f, 0x80|127)
		f = binary.BigEndian.AppendUint64(f, uint64(n))
	}
	f = append(f, mask[:]...)
	for i, b := range payload {
		f = append(f, b^mask[i%4])
	}
	return f
}

// TestFrameReaderMarksSubscribes: whatever pieces the connection's bytes come in, each
// subscribe message comes out with its ID in its extensions (the client's other extensions
// kept, a forged ID replaced), and every other frame (connection_init, pings, a fragment, a
// frame too big to mark) byte for byte as it came.
func TestFrameReaderMarksSubscribes(t *testing.T) {
	mask := [4]byte{0x12, 0x34, 0x56, 0x78}
	subscribe := `{"type":"subscribe","id":"abc","payload":{"query":"subscription { events { id } }","extensions":{"persistedQuery":1,"creditdSubscriptionId":"forged"}}}`
	big := bytes.Repeat([]byte("x"), 70_000)
	long := `{"type":"subscribe","id":"long","payload":{"query":"` + string(bytes.Repeat([]byte(" "), 300)) + `subscription { events { id } }"}}`
	frames := [][]byte{
		clientFrame(0x81, []byte(`{"type":"connection_init","payload":{"afterEvent":{"abc":"ev_1"}}}`), mask),
		clientFrame(0x81, []byte(subscribe), mask),
		clientFrame(0x89, []byte("ping"), mask),
		clientFrame(0x01, []byte(`{"type":"subscribe","id":"frag",`), mask), // a fragment: not whole
		clientFrame(0x80, []byte(`"payload":{}}`), mask),
		clientFrame(0x81, big, mask),
		clientFrame(0x81, []byte(long), mask),
	}
	var wire []byte
	for _, f := range frames {
		wire = append(wire, f...)
	}
	for _, chunk := range []int{1, 3, 7, 1000, len(wire)} {
		var r frameReader
		rng := rand.New(rand.NewPCG(uint64(chunk), 0))
		for rest := wire; len(rest) > 0; {
			n := min(len(rest), 1+rng.IntN(chunk))
			r.feed(rest[:n])
			rest = rest[n:]
		}
		out := r.out
		if len(r.in) != 0 || r.pass != 0 {
			t.Fatalf("chunks of %d: %d bytes held back, %d to pass", chunk, len(r.in), r.pass)
		}
		var got []string
		for len(out) > 0 {
			header, length, ok := frameHeader(out)
			if !ok || len(out) < header+int(length) {
				t.Fatalf("chunks of %d: a cut frame in the output", chunk)
			}
			m := out[header-4 : header]
			payload := make([]byte, length)
			for i := range payload {
				payload[i] = out[header+i] ^ m[i%4]
			}
			got = append(got, string(payload))
			out = out[header+int(length):]
		}
		if len(got) != len(frames) {
			t.Fatalf("chunks of %d: %d frames out, want %d", chunk, len(got), len(frames))
		}
		var marked struct {
			Payload struct {
				Extensions map[string]any `json:"extensions"`
			} `json:"payload"`
		}
		if err := json.Unmarshal([]byte(got[1]), &marked); err != nil {
			t.Fatal(err)
		}
		if ext := marked.Payload.Extensions; ext[subscriptionIDExtension] != "abc" || ext["persistedQuery"] != 1.0 {
			t.Errorf("chunks of %d: subscribe's extensions %v, want its ID and the client's own", chunk, ext)
		}
		if !bytes.Contains([]byte(got[6]), []byte(`"creditdSubscriptionId":"long"`)) {
			t.Errorf("chunks of %d: a subscribe of %d bytes (a 16-bit length) is not marked: %s", chunk, len(long), got[6])
		}
		// The frames not marked, the way they came (mask included).
		var unmarked []byte
		for _, i := range []int{2, 3, 4, 5} {
			unmarked = append(unmarked, frames[i]...)
		}
		if !bytes.HasPrefix(r.out, frames[0]) || !bytes.Contains(r.out, unmarked) {
			t.Errorf("chunks of %d: a frame that is no whole subscribe changed", chunk)
		}
	}
}
