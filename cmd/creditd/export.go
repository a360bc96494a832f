package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/creditd/creditd/credit"
)

// exportCommand writes a store's export (contract §18) to a file, through the same operation
// as GET /v1/export: for staff, and for a first load outside HTTP. The file is written beside
// its name and renamed into place once export_end is written, so that a cut export never
// leaves a file under that name that looks whole.
func exportCommand() command {
	return command{summary: "write the store's export (as GET /v1/export streams it) to --out, gzip-compressed when it ends in .gz", flags: func(fs *flag.FlagSet, opts *credit.Options) func(context.Context, *cmdEnv, []string) error {
		store := fs.String("store", "", "the store to export (required)")
		out := fs.String("out", "", "the file to write; a name ending in .gz is gzip-compressed (required)")
		applications := fs.Bool("applications", true, "include the store's applications")
		return func(ctx context.Context, env *cmdEnv, args []string) error {
			if err := exactlyArgs(args); err != nil {
				return err
			}
			if err := required("store", *store); err != nil {
				return err
			}
			if err := required("out", *out); err != nil {
				return err
			}
			sctx, err := env.asStaff(ctx, *store, cliStaff)
			if err != nil {
				return err
			}
			var p credit.ExportParams
			if *applications {
				p.Include = []string{credit.IncludeApplications}
			}
			counts, err := writeExport(sctx, env.svc.Exports, p, *out)
			if err != nil {
				return err
			}
			return env.print(counts, fmt.Sprintf("exported %d companies, %d ledger entries, %d invoices to %s",
				counts.Companies, counts.LedgerEntries, counts.Invoices, *out))
		}
	}}
}

// writeExport runs the export into a temporary file beside out and renames it into place.
func writeExport(ctx context.Context, exports *credit.Exports, p credit.ExportParams, out string) (credit.ExportCounts, error) {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.partial")
	if err != nil {
		return credit.ExportCounts{}, err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	defer tmp.Close()
	sink := &fileSink{file: tmp, buf: bufio.NewWriterSize(tmp, 1<<16)}
	if strings.HasSuffix(out, ".gz") {
		sink.gz = gzip.NewWriter(sink.buf)
	}
	counts, err := exports.Export(ctx, p, func() (credit.ExportSink, error) { return sink, nil })
	if err == nil {
		err = sink.close()
	}
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	return counts, err
}

// fileSink is an export's file: buffered, optionally gzip-compressed; Flush hands what was
// written to the operating system, and close makes the file durable.
type fileSink struct {
	file *os.File
	buf  *bufio.Writer
	gz   *gzip.Writer
}

func (s *fileSink) Write(b []byte) (int, error) {
	if s.gz != nil {
		return s.gz.Write(b)
	}
	return s.buf.Write(b)
}

// Flush writes out what the compressor and the buffer hold.
func (s *fileSink) Flush() error {
	if s.gz != nil {
		if err := s.gz.Flush(); err != nil {
			return err
		}
	}
	return s.buf.Flush()
}

func (s *fileSink) close() error {
	if s.gz != nil {
		if err := s.gz.Close(); err != nil {
			return err
		}
	}
	if err := s.buf.Flush(); err != nil {
		return err
	}
	return s.file.Sync()
}
