package graph

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// TestDataWrittenAsGqlgenWould holds the data-only fast path of postTransport to the bytes
// gqlgen's json.Marshal writes, and sends data json.Marshal would change down gqlgen's path.
func TestDataWrittenAsGqlgenWould(t *testing.T) {
	t.Parallel()
	for _, data := range []string{
		`{"companies":{"edges":[{"node":{"id":"co_1","name":"Acme \"quoted\" \\ ünï ✓","hold":null}}],"pageInfo":{"hasNextPage":true,"endCursor":"abc"}}}`,
		`{"a":[1,2.5,true,false,null,"\u0001"]}`,
	} {
		if escaped([]byte(data)) {
			t.Fatalf("%s: taken for data json.Marshal changes", data)
		}
		want, err := json.Marshal(&graphql.Response{Data: json.RawMessage(data)})
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		w := &dataWriter{ResponseWriter: rec, body: [][]byte{[]byte(`{"data":`), []byte(data), []byte(`}`)}}
		empty, _ := json.Marshal(&graphql.Response{})
		if n, err := w.Write(empty); err != nil || n != len(empty) {
			t.Fatalf("Write = %d, %v", n, err)
		}
		if got := rec.Body.String(); got != string(want) {
			t.Errorf("fast path wrote\n%s\ngqlgen writes\n%s", got, want)
		}
	}
	for _, data := range []string{`{"name":"A & B"}`, `{"name":"<b>"}`, `{"name":"x>y"}`, "{\"name\":\"line\u2028sep\"}", "{\"name\":\"para\u2029sep\"}"} {
		if !escaped([]byte(data)) {
			t.Errorf("%s: json.Marshal escapes it, so it must take gqlgen's path", data)
		}
	}
}
