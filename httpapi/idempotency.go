package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/creditd/creditd/credit"
)

// Idempotency-Key, the HTTP half (contract §7): which header names the key, what identifies
// the request it was sent with (method, path and canonical body), and how a response is stored
// and replayed. REST writes and GraphQL mutations both run through Idempotency.Run; the claim,
// the transaction and the replay rules are the domain's (credit.Idempotency.Run).

// IdempotencyHeader is the request header that carries the key.
const IdempotencyHeader = "Idempotency-Key"

// Idempotency is a write request's Idempotency-Key and the fingerprint of the request it was
// sent with. Its zero value is a request without a key.
type Idempotency struct {
	// Key is the header's value, "" when the header was absent.
	Key         string
	fingerprint string
}

// ReadIdempotencyKey reads and checks a request's Idempotency-Key header: 1 to 255 printable
// ASCII characters when present (an empty header is malformed, not absent).
//
// Errors: invalid_request (param "Idempotency-Key").
func ReadIdempotencyKey(r *http.Request) (Idempotency, error) {
	values, sent := r.Header[IdempotencyHeader]
	if !sent {
		return Idempotency{}, nil
	}
	key := ""
	if len(values) > 0 {
		key = values[0]
	}
	if len(values) != 1 || !credit.IsHeaderText(key) {
		return Idempotency{}, credit.ParamErrorf(CodeInvalidRequest, IdempotencyHeader, "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	return Idempotency{Key: key}, nil
}

// Bind fingerprints the request the key was sent with: its method, path and body as canonical
// JSON, so that the same body with its members reordered or spaced otherwise is the same
// request. Without a key it does nothing.
//
// Errors: invalid_request (a body that is not JSON).
func (k *Idempotency) Bind(r *http.Request, body []byte) error {
	if k.Key == "" {
		return nil
	}
	canonical, err := canonicalJSON(body)
	if err != nil {
		return credit.Errorf(CodeInvalidRequest, "the request body is not valid JSON")
	}
	// The same bytes as every earlier version hashed, so that keys stored before an upgrade
	// still recognise their retries.
	h := sha256.New()
	h.Write([]byte(r.Method))
	h.Write([]byte{0})
	h.Write([]byte(r.URL.Path))
	h.Write([]byte{0})
	h.Write(canonical)
	k.fingerprint = hex.EncodeToString(h.Sum(nil))
	return nil
}

// canonicalJSON re-encodes a JSON document with object keys sorted and insignificant space
// removed, keeping numbers exactly as written; an empty body counts as {}.
func canonicalJSON(body []byte) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Response is a response as stored under an Idempotency-Key: its status and JSON body.
type Response struct {
	Status int
	Body   []byte
}

// encode stores a response as "<status> <body>", the form migration 0003 also writes.
func (r Response) encode() []byte {
	return append([]byte(strconv.Itoa(r.Status)+" "), r.Body...)
}

func decodeResponse(b []byte) (Response, error) {
	status, body, ok := bytes.Cut(b, []byte(" "))
	code, err := strconv.Atoi(string(status))
	if !ok || err != nil || code < 100 || code > 599 {
		return Response{}, fmt.Errorf("stored idempotent response is malformed")
	}
	return Response{Status: code, Body: body}, nil
}

// IdempotencyRecords is what Run needs of the domain: the records that make a write run once
// per key. *credit.Idempotency is one.
type IdempotencyRecords interface {
	Run(ctx context.Context, key, fingerprint string, run func(ctx context.Context) (response []byte, store bool, err error)) (response []byte, replayed bool, err error)
}

// Run runs a write under the key: run executes at most once for the key, also under concurrent
// retries and across instances, and a retry of a completed request gets the stored response
// again with replayed=true. run receives a context carrying the write's transaction and
// returns the response and whether it is kept for the key (credit.Stored says which outcomes
// are); a response not kept, or an error, rolls the write back and releases the key.
//
// Errors: insufficient_scope, idempotency_key_reused, idempotency_key_in_use, and run's own.
func (k Idempotency) Run(ctx context.Context, records IdempotencyRecords, run func(ctx context.Context) (Response, bool, error)) (resp Response, replayed bool, err error) {
	stored, replayed, err := records.Run(ctx, k.Key, k.fingerprint, func(ctx context.Context) ([]byte, bool, error) {
		r, keep, err := run(ctx)
		if err != nil {
			return nil, false, err
		}
		resp = r
		return r.encode(), keep, nil
	})
	if err != nil || !replayed {
		return resp, false, err
	}
	resp, err = decodeResponse(stored)
	return resp, true, err
}

// MarkReplayed sets the header that tells a client its response was replayed.
func MarkReplayed(w http.ResponseWriter) { w.Header().Set("Idempotent-Replayed", "true") }
