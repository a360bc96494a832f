package server

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
	"github.com/klauspost/compress/gzip"
	"github.com/zeebo/xxh3"
)

// Conditional requests and compression (contract §14).
//
// Every successful GET of a resource or list carries a strong ETag: the 128-bit XXH3 hash of the
// body, the very bytes the response carries, so the tag changes exactly when the body does,
// whatever changed it: a write, an erasure, a key whose scopes show other event types under the
// same URL, or what a company's updated_at does not record (the store's currency and safety
// buffer). A tag derived from what the request reads (updated_at, a ledger's sequence, the event
// counter) would save only the hashing, about 4 µs for a page of 250 companies (about 90 KB; SHA-256
// took 270 µs), and would have to cover every one of those inputs to be right. XXH3 is not a
// cryptographic hash: two bodies of one URL colliding by accident is a 2^-128 chance, and forging
// a collision would only let someone who writes both bodies serve a client a stale page.
//
// gzip (gzhttp) compresses the bodies of over 1 KiB that the client accepts gzip for, and gives
// the compressed representation its own strong tag, the identity tag with -gzip before its
// closing quote. A client sends back the form it got; compress strips the suffix from
// If-None-Match before the handlers compare (this one and the playground's http.ServeContent know
// only identity tags) and puts it back on the ETag of the 304 that answers it.

// etagSuffix marks the tag of a gzip-compressed representation.
const etagSuffix = "-gzip"

// compressMinSize is the smallest body compressed: below about 1 KiB, gzip's header and the CPU
// cost more than the bytes saved.
const compressMinSize = 1024

// compress wraps h in gzhttp: gzip at the fastest level (a few percent more compression is not
// worth the CPU the API needs for requests), compressed bodies' ETags suffixed.
// Responses that already chose an encoding (/metrics compresses itself) pass unchanged, and
// compressed request bodies are refused as before (gzhttp leaves them alone by default).
func compress(h http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(
		gzhttp.MinSize(compressMinSize),
		gzhttp.CompressionLevel(gzip.BestSpeed),
		gzhttp.SuffixETag(etagSuffix),
	)
	if err != nil {
		panic("server: gzhttp options: " + err.Error()) // fixed options; a test runs them
	}
	gz := wrap(h)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if inm, ok := identityTags(r.Header.Values("If-None-Match")); ok {
			r = r.Clone(r.Context())
			r.Header.Set("If-None-Match", inm)
			w = &notModifiedWriter{ResponseWriter: w}
		}
		gz(w, r)
	})
}

// identityTags is an If-None-Match header with the gzip tags' suffix removed, and whether
// there was one.
func identityTags(header []string) (string, bool) {
	found := false
	var tags []string
	for _, line := range header {
		for _, t := range strings.Split(line, ",") {
			t = strings.TrimSpace(t)
			if strings.HasSuffix(t, etagSuffix+`"`) {
				t = strings.TrimSuffix(t, etagSuffix+`"`) + `"`
				found = true
			}
			tags = append(tags, t)
		}
	}
	return strings.Join(tags, ", "), found
}

// notModifiedWriter answers a request that named a gzip tag: a 304 carries the tag in that form.
type notModifiedWriter struct{ http.ResponseWriter }

func (w *notModifiedWriter) WriteHeader(status int) {
	if tag := w.Header().Get("ETag"); status == http.StatusNotModified && strings.HasSuffix(tag, `"`) && !strings.HasSuffix(tag, etagSuffix+`"`) {
		w.Header().Set("ETag", strings.TrimSuffix(tag, `"`)+etagSuffix+`"`)
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *notModifiedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// conditional gives next's 200 answers to GET (and HEAD, whose handlers write the body the
// server then drops) a strong ETag and answers 304 without a body when
// If-None-Match names the current tag. Other methods and statuses pass unchanged.
func conditional(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			next.ServeHTTP(w, r)
			return
		}
		cw := &conditionalWriter{ResponseWriter: w}
		next.ServeHTTP(cw, r)
		cw.finish(r)
	})
}

// conditionalWriter holds a 200 response's body until it is complete, to tag it.
type conditionalWriter struct {
	http.ResponseWriter
	status  int
	passing bool // the status is not 200: written through
	body    bytes.Buffer
}

func (w *conditionalWriter) WriteHeader(status int) {
	if w.status != 0 {
		return
	}
	w.status = status
	if status != http.StatusOK {
		w.passing = true
		w.ResponseWriter.WriteHeader(status)
	}
}

func (w *conditionalWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.passing {
		return w.ResponseWriter.Write(b)
	}
	return w.body.Write(b)
}

func (w *conditionalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish tags the held body and writes it, or 304 when the client has it already.
func (w *conditionalWriter) finish(r *http.Request) {
	if w.passing {
		return
	}
	sum := xxh3.Hash128(w.body.Bytes()).Bytes()
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:]) + `"`
	h := w.Header()
	if matchesTag(r.Header.Values("If-None-Match"), tag) {
		h.Set("ETag", tag)
		h.Del("Content-Length")
		h.Del("Content-Type")
		w.ResponseWriter.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("ETag", tag)
	w.ResponseWriter.WriteHeader(http.StatusOK)
	_, _ = w.ResponseWriter.Write(w.body.Bytes())
}

// matchesTag reports whether an If-None-Match header names tag, compared weakly as RFC 9110 says
// for If-None-Match. "*" names any current representation.
func matchesTag(header []string, tag string) bool {
	for _, line := range header {
		for _, t := range strings.Split(line, ",") {
			if t = strings.TrimPrefix(strings.TrimSpace(t), "W/"); t == "*" || t == tag {
				return true
			}
		}
	}
	return false
}
