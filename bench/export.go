package bench

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/creditd/creditd/database"
)

// The export scenario (issue 39, contract §18): the large store's whole state in one GET
// /v1/export, once without and once with gzip, from a creditd serve of its own on the seeded
// dataset, then the same through `creditd export --out FILE`. It is one long request, not a
// load: what counts is its time, the rows a second, the bytes on the wire and that the
// server's memory does not grow with the store (goals: under 60 s, under 64 MB of growth).

// ExportRun is one export's figures.
type ExportRun struct {
	// Name is "HTTP, identity", "HTTP, gzip" or "creditd export (file)".
	Name string `json:"name"`
	// Time is from the request to the last byte; Rows the records exported (the counts of
	// export_end), RowsPerSecond their rate.
	Time          time.Duration `json:"time"`
	Rows          int           `json:"rows"`
	RowsPerSecond float64       `json:"rows_per_second"`
	// Bytes is what the client received (compressed, with gzip); Lines the lines read.
	Bytes int64 `json:"bytes"`
	Lines int   `json:"lines"`
	// RSSBefore is the server's resident set before the export, PeakRSS its high-water mark
	// during it (VmHWM, reset before), Growth the difference; for the file, PeakRSS is the
	// whole process's (ru_maxrss) and Growth is not known.
	RSSBefore int64 `json:"rss_before"`
	PeakRSS   int64 `json:"peak_rss"`
	Growth    int64 `json:"growth"`
	// CPU is the server's CPU time (user and system) during the export: creditd's alone, not
	// PostgreSQL's backends.
	CPU time.Duration `json:"cpu"`
	// Counts is the export_end line's counts.
	Counts map[string]int `json:"counts"`
	// Phases is when each kind of line began, from the request (company, ledger_entry,
	// invoice, application, export_end): where the time goes.
	Phases map[string]time.Duration `json:"phases"`
}

// ExportReport is a whole export run.
type ExportReport struct {
	Postgres   bool        `json:"postgres"`
	Dataset    Dataset     `json:"-"`
	Reused     bool        `json:"reused_dataset"`
	LoadBefore string      `json:"load_before"`
	LoadAfter  string      `json:"load_after"`
	Runs       []ExportRun `json:"runs"`
}

// RunExport seeds (or reuses) cfg's dataset, starts creditd serve on it and exports the large
// store cfg.Rounds times (default 1) over HTTP without and with gzip, then once with
// `creditd export`. With cfg.Profile, a CPU profile of the first export's first cfg.Duration
// is written to WorkDir/export.cpu.pprof.
func RunExport(ctx context.Context, cfg Config) (*ExportReport, error) {
	rep := &ExportReport{LoadBefore: loadAvg(), Postgres: database.IsPostgres(cfg.DB)}
	if err := os.MkdirAll(cfg.WorkDir, 0o755); err != nil {
		return nil, err
	}
	var scratch Report
	ds, err := cfg.dataset(ctx, &scratch)
	if err != nil {
		return nil, err
	}
	rep.Dataset, rep.Reused = ds, scratch.Reused
	dsn := cfg.DB
	if rep.Postgres {
		if dsn, err = SchemaURL(cfg.DB, cfg.schema(), "creditbench-export-creditd"); err != nil {
			return nil, err
		}
	}
	flags := []string{"--rate-limit", "1000000000", "--platform-rate-limit", "1000000000"}
	if cfg.Profile {
		flags = append(flags, "--pprof", "127.0.0.1:0")
	}
	srv, err := StartCreditd(ctx, cfg.Creditd, dsn, filepath.Join(cfg.WorkDir, "creditd-export.log"), append(flags, cfg.ServeFlags...)...)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	rounds := max(1, cfg.Rounds)
	for round := range rounds {
		for _, gz := range []bool{false, true} {
			stopProfile := func() error { return nil }
			if cfg.Profile && round == 0 && !gz {
				stopProfile = profile(ctx, srv.PprofAddr, cfg.Duration, filepath.Join(cfg.WorkDir, "export.cpu.pprof"))
			}
			run, err := exportOverHTTP(ctx, srv, ds.Secret, gz)
			if perr := stopProfile(); perr != nil {
				cfg.logf("export: profile: %v", perr)
			}
			if err != nil {
				return rep, err
			}
			cfg.logf("%s: %s, %d rows (%.0f/s), %d bytes, RSS %.1f MB → peak %.1f MB (+%.1f MB), CPU %s", run.Name, run.Time.Round(100*time.Millisecond),
				run.Rows, run.RowsPerSecond, run.Bytes, megabytes(run.RSSBefore), megabytes(run.PeakRSS), megabytes(run.Growth), run.CPU.Round(100*time.Millisecond))
			cfg.logf("%s: lines began at %s", run.Name, run.phaseList())
			rep.Runs = append(rep.Runs, run)
		}
	}
	srv.Stop()
	run, err := exportToFile(ctx, cfg.Creditd, dsn, ds.StoreID, filepath.Join(cfg.WorkDir, "export.ndjson"))
	if err != nil {
		return rep, err
	}
	cfg.logf("%s: %s, %d rows (%.0f/s), %d bytes, peak RSS %.1f MB", run.Name, run.Time.Round(100*time.Millisecond), run.Rows, run.RowsPerSecond, run.Bytes, megabytes(run.PeakRSS))
	rep.Runs = append(rep.Runs, run)
	rep.LoadAfter = loadAvg()
	return rep, nil
}

// exportOverHTTP runs one GET /v1/export against srv and reads it to the end, as a client
// that stores lines as they come would, decompressing it when gz.
func exportOverHTTP(ctx context.Context, srv *Process, secret string, gz bool) (ExportRun, error) {
	run := ExportRun{Name: "HTTP, identity"}
	if gz {
		run.Name = "HTTP, gzip"
	}
	if err := srv.ResetPeak(); err != nil {
		return run, err
	}
	mem, err := srv.ReadMemory()
	if err != nil {
		return run, err
	}
	run.RSSBefore = mem.RSS
	cpu0, err := srv.CPUTime()
	if err != nil {
		return run, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+srv.Addr+"/v1/export", nil)
	if err != nil {
		return run, err
	}
	req.Header.Set("Authorization", "Bearer "+secret)
	if gz {
		req.Header.Set("Accept-Encoding", "gzip")
	}
	// DisableCompression: the body is read as sent, so Bytes counts the wire's bytes.
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	started := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return run, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		return run, fmt.Errorf("export: %d %s", resp.StatusCode, firstLine(b))
	}
	wire := &countingReader{r: resp.Body}
	var body io.Reader = wire
	if gz {
		if resp.Header.Get("Content-Encoding") != "gzip" {
			return run, fmt.Errorf("export: asked for gzip, got Content-Encoding %q", resp.Header.Get("Content-Encoding"))
		}
		zr, err := gzip.NewReader(wire)
		if err != nil {
			return run, err
		}
		body = zr
	}
	if run.Lines, run.Counts, run.Phases, err = readExportLines(body, started); err != nil {
		return run, err
	}
	run.Time = time.Since(started)
	run.Bytes = wire.n
	cpu1, err := srv.CPUTime()
	if err != nil {
		return run, err
	}
	run.CPU = cpu1 - cpu0
	if mem, err = srv.ReadMemory(); err != nil {
		return run, err
	}
	run.PeakRSS, run.Growth = mem.Peak, mem.Peak-run.RSSBefore
	run.rows()
	return run, nil
}

// exportToFile runs `creditd export` into path and measures the whole process.
func exportToFile(ctx context.Context, binary, dsn, store, path string) (ExportRun, error) {
	run := ExportRun{Name: "creditd export (file)"}
	_ = os.Remove(path)
	started := time.Now()
	cmd := exec.CommandContext(ctx, binary, "export", "--db", dsn, "--store", store, "--out", path)
	out, err := cmd.CombinedOutput()
	run.Time = time.Since(started)
	if err != nil {
		return run, fmt.Errorf("creditd export: %w: %s", err, firstLine(out))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		run.PeakRSS = ru.Maxrss << 10 // kilobytes on Linux
	}
	run.CPU = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	f, err := os.Open(path)
	if err != nil {
		return run, err
	}
	defer f.Close()
	defer os.Remove(path)
	counted := &countingReader{r: f}
	if run.Lines, run.Counts, _, err = readExportLines(counted, time.Now()); err != nil {
		return run, err
	}
	run.Bytes = counted.n
	run.rows()
	return run, nil
}

// phaseList says when each kind of line began, in the export's order.
func (r *ExportRun) phaseList() string {
	var out []string
	for _, k := range []string{"company", "ledger_entry", "invoice", "application", "export_end"} {
		if d, ok := r.Phases[k]; ok {
			out = append(out, fmt.Sprintf("%s %.1f s", k, d.Seconds()))
		}
	}
	return strings.Join(out, ", ")
}

func (r *ExportRun) rows() {
	for _, n := range r.Counts {
		r.Rows += n
	}
	if s := r.Time.Seconds(); s > 0 {
		r.RowsPerSecond = float64(r.Rows) / s
	}
}

// readExportLines reads an export to its end and returns its lines, export_end's counts and
// when each kind of line began (since started); an export without export_end (cut) is an
// error.
func readExportLines(r io.Reader, started time.Time) (int, map[string]int, map[string]time.Duration, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	lines := 0
	phases := map[string]time.Duration{}
	var last, kind []byte
	prefix := []byte(`{"type":"`)
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			lines++
			if rest, ok := bytes.CutPrefix(line, prefix); ok {
				if k, _, ok := bytes.Cut(rest, []byte(`"`)); ok && !bytes.Equal(k, kind) {
					kind = append(kind[:0], k...)
					phases[string(k)] = time.Since(started)
				}
			}
			if bytes.HasPrefix(line, []byte(`{"type":"export_end"`)) {
				last = append(last[:0], line...)
			}
		}
		if err == bufio.ErrBufferFull {
			// A line longer than the buffer: read its rest as more of the same line.
			for err == bufio.ErrBufferFull {
				_, err = br.ReadSlice('\n')
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return lines, nil, phases, err
		}
	}
	if last == nil {
		return lines, nil, phases, fmt.Errorf("export cut: no export_end after %d lines", lines)
	}
	var end struct {
		Counts map[string]int `json:"counts"`
	}
	if err := json.Unmarshal(last, &end); err != nil {
		return lines, nil, phases, fmt.Errorf("export_end %q: %w", last, err)
	}
	return lines, end.Counts, phases, nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// WriteMarkdown writes the runs as a table.
func (r *ExportReport) WriteMarkdown(w io.Writer) {
	fmt.Fprintf(w, "Load average before: %s; after: %s.\n\n", r.LoadBefore, r.LoadAfter)
	fmt.Fprintln(w, "| Run | Time | Rows | Rows/s | Bytes | Server RSS before → peak (growth) | creditd CPU | Lines began at |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, run := range r.Runs {
		mem := fmt.Sprintf("%.1f → %.1f MB (+%.1f MB)", megabytes(run.RSSBefore), megabytes(run.PeakRSS), megabytes(run.Growth))
		if run.RSSBefore == 0 {
			mem = fmt.Sprintf("%.1f MB, the whole process", megabytes(run.PeakRSS))
		}
		fmt.Fprintf(w, "| %s | %.1f s | %d | %.0f | %d | %s | %.1f s | %s |\n", run.Name, run.Time.Seconds(), run.Rows, run.RowsPerSecond, run.Bytes, mem, run.CPU.Seconds(), run.phaseList())
	}
}

// megabytes is b in MB (10^6 bytes), as the other tables give memory.
func megabytes(b int64) float64 { return float64(b) / 1e6 }
