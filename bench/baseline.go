package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A baseline response is kept in dir as <scenario>.body with its status in <scenario>.status.

func writeBaselineResponse(dir, scenario string, status int, body []byte) error {
	if err := os.WriteFile(filepath.Join(dir, scenario+".body"), body, 0o600); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, scenario+".status"), []byte(strconv.Itoa(status)), 0o600)
}

// BaselineHandler answers /<scenario> with the response bytes saved for that scenario: no
// authentication, no database, no logging, only net/http and the body. It is the physical
// ceiling the server is compared with.
func BaselineHandler(dir string) (http.Handler, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	type response struct {
		status int
		body   []byte
	}
	responses := map[string]response{}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".body")
		if !ok {
			continue
		}
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		st, err := os.ReadFile(filepath.Join(dir, name+".status"))
		if err != nil {
			return nil, err
		}
		status, err := strconv.Atoi(strings.TrimSpace(string(st)))
		if err != nil {
			return nil, err
		}
		responses["/"+name] = response{status: status, body: body}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok := responses[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		// Read the request body as a real handler must before answering.
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Header().Set("Content-Length", strconv.Itoa(len(resp.body)))
		w.WriteHeader(resp.status)
		_, _ = w.Write(resp.body)
	}), nil
}

// ServeBaseline serves BaselineHandler(dir) on addr until ctx ends, announcing its address on
// out as the JSON line {"msg":"listening","addr":...} that creditd serve also writes.
func ServeBaseline(ctx context.Context, addr, dir string, out io.Writer) error {
	h, err := BaselineHandler(dir)
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	line, _ := json.Marshal(map[string]string{"msg": "listening", "addr": l.Addr().String()})
	fmt.Fprintln(out, string(line))
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = hs.Close()
	}()
	if err := hs.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
