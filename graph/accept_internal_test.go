package graph

import (
	"net/http/httptest"
	"testing"
)

// TestResponseMediaType: application/graphql-response+json when Accept prefers it, by q-value,
// then specificity, then order; application/json otherwise.
func TestResponseMediaType(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]string{
		"":                                  mediaJSON,
		"*/*":                               mediaJSON,
		"application/json":                  mediaJSON,
		"application/graphql-response+json": mediaGraphQLResponse,
		"application/graphql-response+json,application/json;q=0.9":                                                          mediaGraphQLResponse, // Apollo Client 4
		"multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9":                       mediaGraphQLResponse,
		"application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed": mediaGraphQLResponse, // urql
		"application/json, application/graphql-response+json":                                                               mediaJSON,
		"application/json;q=0.5, application/graphql-response+json":                                                         mediaGraphQLResponse,
		"application/graphql-response+json;q=0.5, application/json":                                                         mediaJSON,
		"application/graphql-response+json;q=0, */*":                                                                        mediaJSON,
		"application/*, application/graphql-response+json":                                                                  mediaGraphQLResponse,
		"text/html": mediaJSON,
		"application/graphql-response+json;q=oops": mediaJSON,
	} {
		r := httptest.NewRequest("POST", "/graphql", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := responseMediaType(r); got != want {
			t.Errorf("Accept %q: %s, want %s", accept, got, want)
		}
	}
}

// TestPrefersEventStream: a graphql-sse client's POST is a subscription stream; urql's queries,
// which accept text/event-stream among other types, and everything else are not.
func TestPrefersEventStream(t *testing.T) {
	t.Parallel()
	for accept, want := range map[string]bool{
		"text/event-stream":                         true, // graphql-sse
		"text/event-stream, application/json;q=0.5": true,
		"application/graphql-response+json, application/graphql+json, application/json, text/event-stream, multipart/mixed": false, // urql
		"multipart/mixed;deferSpec=20220824,application/graphql-response+json,application/json;q=0.9":                       false, // Apollo Client 4
		"application/json, text/event-stream": false,
		"*/*":                                 false,
		"":                                    false,
		"text/event-stream;q=0":               false,
	} {
		r := httptest.NewRequest("POST", "/graphql", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := PrefersEventStream(r); got != want {
			t.Errorf("Accept %q: %v, want %v", accept, got, want)
		}
	}
}
