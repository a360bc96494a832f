package graph

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestNextFrameAsSendWrites holds the next messages sendFrame assembles around a payload to
// the bytes send writes for the same response, for operation IDs and payloads that JSON escapes.
func TestNextFrameAsSendWrites(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"1", "a3f0c2d4-sub", `quo"te\ <b>&</b> ünï ✓ ` + "\u2028\x01"} {
		for _, resp := range []*graphql.Response{
			{Data: json.RawMessage(`{"events":{"id":"ev_1","type":"ledger_entry.created","data":{"note":"<script>&amp; \u2028"}}}`)},
			{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "a <b>failure</b>", Extensions: map[string]any{"code": "unavailable"}}}},
		} {
			payload, err := json.Marshal(resp)
			if err != nil {
				t.Fatal(err)
			}
			frame := nextFrame(id)
			got := append(append([]byte(frame[0]), payload...), frame[1]...)
			var want bytes.Buffer
			if err := json.NewEncoder(&want).Encode(wsMessage{Type: "next", ID: id, Payload: payload}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Errorf("id %q:\nassembled %s\nsend      %s", id, got, want.Bytes())
			}
		}
	}
}
