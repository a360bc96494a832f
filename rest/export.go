package rest

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// DefaultExportWriteTimeout is how long one write of an export may wait for its client when
// API.ExportWriteTimeout is zero: the subscriptions' (graph.DefaultWriteTimeout).
const DefaultExportWriteTimeout = 10 * time.Second

// export serves GET /v1/export (contract §18): the domain checks and streams, this writes.
// A refusal (scope, include, another export running) is an error answer; once the stream has
// begun, a failure can only cut it short, which its missing export_end line tells the client.
func (a *API) export(w http.ResponseWriter, r *http.Request) {
	q, err := queryParams(r.URL.RawQuery, "include")
	if err != nil {
		httpapi.WriteError(w, r, err)
		return
	}
	var p credit.ExportParams
	if v, ok := q["include"]; ok {
		p.Include = []string{v}
	}
	timeout := a.ExportWriteTimeout
	if timeout <= 0 {
		timeout = DefaultExportWriteTimeout
	}
	started := false
	_, err = a.svc.Exports.Export(r.Context(), p, func() (credit.ExportSink, error) {
		started = true
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		return &responseSink{w: w, rc: http.NewResponseController(w), timeout: timeout}, nil
	})
	switch {
	case err != nil && !started:
		httpapi.WriteError(w, r, err)
	case errors.Is(err, context.Canceled):
		httpapi.Logger(r.Context()).Info("export cut: the client went away")
	case err != nil:
		// The response already says 200: the log is the one place that says why the stream
		// ended without export_end (the database, a statement's timeout, a stalled client).
		httpapi.Logger(r.Context()).Warn("export cut", "err", err)
	}
}

// responseSink writes an export to its response, each write within timeout: a client that
// stops reading is cut off like a slow subscriber, and the export ends, releasing its
// snapshot and its lock.
type responseSink struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
}

// Write writes b within the deadline. (A writer without deadlines, httptest's recorder, is
// written without one.)
func (s *responseSink) Write(b []byte) (int, error) {
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return 0, err
	}
	return s.w.Write(b)
}

// Flush sends what was written within the deadline.
func (s *responseSink) Flush() error {
	if err := s.rc.SetWriteDeadline(time.Now().Add(s.timeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return err
	}
	return s.rc.Flush()
}
