package graph

import (
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// Media types of /graphql's JSON answers (GraphQL over HTTP).
const (
	mediaJSON            = "application/json"
	mediaGraphQLResponse = "application/graphql-response+json"
)

// responseMediaType is the media type of a JSON answer to r, a request error's included
// (contract §9, 2026-11-27): application/graphql-response+json when the request's Accept
// prefers it to application/json, else application/json, as for a client that predates GraphQL
// over HTTP. Preference is by q-value, then by how specifically a range names the type (a type
// named beats application/*, which beats */*), then by the order of the header: Apollo Client's
// "application/graphql-response+json,application/json;q=0.9" and urql's
// "application/graphql-response+json, application/graphql+json, application/json, ..." both
// prefer it; "*/*" or no Accept does not.
func responseMediaType(r *http.Request) string {
	gr, json := acceptance(r.Header.Values("Accept"), mediaGraphQLResponse), acceptance(r.Header.Values("Accept"), mediaJSON)
	if gr.q > 0 && gr.better(json) {
		return mediaGraphQLResponse
	}
	return mediaJSON
}

// accepted is how an Accept header takes one media type: the q-value of the most specific
// range that matches it, that range's specificity (2 the type itself, 1 type/*, 0 */*, -1 no
// range), and its position in the header.
type accepted struct {
	q           float64
	specificity int
	position    int
}

func (a accepted) better(b accepted) bool {
	if a.q != b.q {
		return a.q > b.q
	}
	if a.specificity != b.specificity {
		return a.specificity > b.specificity
	}
	return a.position < b.position
}

func acceptance(header []string, mediaType string) accepted {
	best := accepted{specificity: -1}
	typ, _, _ := strings.Cut(mediaType, "/")
	position := 0
	for _, line := range header {
		for _, part := range strings.Split(line, ",") {
			position++
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err != nil {
				continue
			}
			specificity := -1
			switch mt {
			case mediaType:
				specificity = 2
			case typ + "/*":
				specificity = 1
			case "*/*":
				specificity = 0
			}
			if specificity <= best.specificity {
				continue
			}
			q := 1.0
			if v, ok := params["q"]; ok {
				if q, err = strconv.ParseFloat(v, 64); err != nil || q < 0 || q > 1 {
					continue
				}
			}
			best = accepted{q: q, specificity: specificity, position: position}
		}
	}
	return best
}

// acceptsMultipart reports whether r's Accept includes multipart/mixed: whether the client
// reads incremental delivery (Apollo Client sends it for an operation with @defer, urql for
// every request).
func acceptsMultipart(r *http.Request) bool {
	for _, line := range r.Header.Values("Accept") {
		for _, part := range strings.Split(line, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
			if err == nil && mt == "multipart/mixed" && params["q"] != "0" {
				return true
			}
		}
	}
	return false
}

// PrefersEventStream reports whether r's Accept prefers text/event-stream to every other answer
// /graphql gives (GraphQL's JSON types, multipart/mixed): a graphql-sse client's request, which
// accepts text/event-stream alone, is a subscription stream; urql's queries, whose Accept
// lists text/event-stream after the JSON types, are not.
func PrefersEventStream(r *http.Request) bool {
	header := r.Header.Values("Accept")
	sse := acceptance(header, "text/event-stream")
	if sse.q <= 0 {
		return false
	}
	for _, other := range []string{mediaGraphQLResponse, mediaJSON, "multipart/mixed"} {
		if !sse.better(acceptance(header, other)) {
			return false
		}
	}
	return true
}
