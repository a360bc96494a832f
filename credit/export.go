package credit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/application"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/event"
	"github.com/creditd/creditd/ent/invoice"
	"github.com/creditd/creditd/ent/ledgerentry"
)

// The export (contract §18): a store's companies, ledger entries, invoices and, when asked,
// applications, as newline-delimited JSON read from one snapshot of the database, headed by
// the feed position that snapshot holds exactly. A mirror loads it, then follows the feed
// from that position (GET /v1/events?after=) and never misses or repeats a change.
//
// Memory stays bounded: rows are read by keyset in batches of Options.ExportBatch and each batch is
// written and flushed before the next is read, so the stream is never built in memory.

// defaultExportBatch is how many rows one read of the export returns: large enough that a
// statement's cost is spread over many rows, small enough that a batch's views stay a few
// hundred kilobytes.
const defaultExportBatch = 1000

// ExportTimeout bounds an export as a whole, in place of the requests' database deadline
// (serve --db-timeout), which a stream of the whole store would outlast: long enough for the
// benchmark's store (10,000 companies, 1.19 million entries) many times over, short enough
// that a snapshot never holds back PostgreSQL's vacuum or SQLite's checkpoints for long. Each
// statement is still bounded by PostgreSQL's statement_timeout, and each write to a client
// by the stream write timeout.
const ExportTimeout = 30 * time.Minute

// IncludeApplications is the value of include that adds applications to an export.
const IncludeApplications = "applications"

// ExportParams are the inputs of Exports.Export.
type ExportParams struct {
	// Include lists what is added to the export: only IncludeApplications exists.
	Include []string
}

// ExportCounts counts the records of an export by kind, for its export_end line.
type ExportCounts struct {
	Companies     int `json:"companies"`
	LedgerEntries int `json:"ledger_entries"`
	Invoices      int `json:"invoices"`
	// Applications is present only when the export includes them.
	Applications *int `json:"applications,omitempty"`
}

// ExportSink is where an export's lines go: a response or a file. Flush pushes what was
// written to the reader (the client, the disk); a sink that cannot write within its own
// deadline fails the write, which ends the export.
type ExportSink interface {
	io.Writer
	Flush() error
}

// CheckExportParams checks an export's inputs that need nothing read, and reports whether
// applications are included.
//
// Errors: invalid_parameter (include).
func CheckExportParams(p ExportParams) (applications bool, err error) {
	for _, v := range p.Include {
		for _, part := range strings.Split(v, ",") {
			if part != IncludeApplications {
				return false, ParamErrorf(CodeInvalidParameter, "include", "include must be %s", IncludeApplications)
			}
			applications = true
		}
	}
	return applications, nil
}

// Export writes the viewer's store's state to the sink that open returns, as of one snapshot
// of the database. Everything that can refuse the export (scopes, include, another export of
// the store running on any instance) is checked before open is called, so that a refusal can
// still be answered as an error; after open, an error means the stream was cut (it then has
// no export_end line). One export per store runs at a time across every process on the
// database: the lock is the database's (Snapshots.TryLock), held until Export returns.
//
// Errors: insufficient_scope (read_credit; read_applications when included),
// invalid_parameter (include), export_in_progress, unauthenticated (a cached key refused),
// and the database's and the sink's.
func (s *Exports) Export(ctx context.Context, p ExportParams, open func() (ExportSink, error)) (ExportCounts, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return ExportCounts{}, err
	}
	withApplications, err := CheckExportParams(p)
	if err != nil {
		return ExportCounts{}, err
	}
	if withApplications {
		if err := requireScope(ctx, ScopeReadApplications); err != nil {
			return ExportCounts{}, err
		}
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return ExportCounts{}, err
	}
	if err := s.auth.confirmKey(ctx); err != nil {
		return ExportCounts{}, err
	}
	release, ok, err := s.db.TryLock(ctx, "creditd export "+st.ID)
	if err != nil {
		return ExportCounts{}, err
	}
	if !ok {
		return ExportCounts{}, Errorf(CodeExportInProgress, "an export of this store is running; try again once it has ended")
	}
	defer release()
	ctx, cancel := context.WithTimeout(ctx, ExportTimeout)
	defer cancel()
	var counts ExportCounts
	err = s.db.ReadSnapshot(ctx, func(ctx context.Context) error {
		w := exportWriter{}
		// The first read fixes the snapshot: the feed's position is read in it, first.
		asOf, err := s.exportPosition(ctx)
		if err != nil {
			return err
		}
		if w.sink, err = open(); err != nil {
			return err
		}
		w.buf = append(w.buf, `{"type":"export","as_of_event":`...)
		if asOf == "" {
			w.buf = append(w.buf, "null"...)
		} else {
			w.buf = appendJSONString(w.buf, asOf)
		}
		w.buf = append(w.buf, `,"store_id":`...)
		w.buf = appendJSONString(w.buf, st.ID)
		w.buf = append(w.buf, `,"started_at":`...)
		w.buf = At(s.clock.Now()).AppendJSON(w.buf)
		w.buf = append(w.buf, "}\n"...)
		if err := w.flush(); err != nil {
			return err
		}
		if counts.Companies, err = s.exportCompanies(ctx, &w, st); err != nil {
			return err
		}
		if counts.LedgerEntries, err = s.exportLedger(ctx, &w, st); err != nil {
			return err
		}
		if counts.Invoices, err = s.exportInvoices(ctx, &w, st); err != nil {
			return err
		}
		if withApplications {
			n, err := s.exportApplications(ctx, &w)
			if err != nil {
				return err
			}
			counts.Applications = &n
		}
		w.buf = append(w.buf, `{"type":"export_end","counts":`...)
		if w.buf, err = appendView(w.buf, counts); err != nil {
			return err
		}
		w.buf = append(w.buf, "}\n"...)
		return w.flush()
	})
	return counts, err
}

// exportPosition returns the newest event of the feed that the viewer may read, as the
// snapshot holds it, or "" for an empty feed. Events are numbered in commit order per store
// (the store's counter is taken inside each writing transaction), so the snapshot holds
// exactly the events up to this one and none after it.
func (s *Exports) exportPosition(ctx context.Context) (string, error) {
	readable, err := readableEventTypes(ctx)
	if err != nil {
		return "", err
	}
	rows, err := s.db.Reader(ctx).Event.Query().Where(event.TypeIn(readable...)).
		Order(ent.Desc(event.FieldSeq)).Limit(1).Select(event.FieldID).All(ctx)
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return rows[0].ID, nil
}

// exportWriter gathers an export's lines and hands them to the sink a batch at a time.
type exportWriter struct {
	sink ExportSink
	buf  []byte
}

// flush writes and flushes the lines gathered.
func (w *exportWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	if _, err := w.sink.Write(w.buf); err != nil {
		return err
	}
	w.buf = w.buf[:0]
	return w.sink.Flush()
}

// exportCompanies writes the store's companies by ID, each as GET /v1/companies/{id} shows it.
func (s *Exports) exportCompanies(ctx context.Context, w *exportWriter, st *ent.Store) (int, error) {
	n, last := 0, ""
	for {
		rows, err := s.db.Reader(ctx).Company.Query().Where(company.IDGT(last)).
			Order(ent.Asc(company.FieldID)).Limit(s.exportBatch).Select(companyViewColumns...).All(ctx)
		if err != nil {
			return n, err
		}
		for _, c := range rows {
			w.buf = append(w.buf, `{"type":"company","company":`...)
			w.buf = companyView(c, st).AppendJSON(w.buf)
			w.buf = append(w.buf, "}\n"...)
		}
		n += len(rows)
		if err := w.flush(); err != nil || len(rows) < s.exportBatch {
			return n, err
		}
		last = rows[len(rows)-1].ID
	}
}

// exportLedger writes the store's ledger entries company by company, oldest first, each as
// the ledger's pages show it (with company_id and balance_after), read by keyset along the
// (company_id, seq) index.
func (s *Exports) exportLedger(ctx context.Context, w *exportWriter, st *ent.Store) (int, error) {
	n := 0
	var lastCompany string
	var lastSeq int64
	for {
		rows, err := s.db.Reader(ctx).LedgerEntry.Query().
			Where(s.db.RowsAfter(ledgerentry.FieldCompanyID, ledgerentry.FieldSeq, lastCompany, lastSeq)).
			Order(ent.Asc(ledgerentry.FieldCompanyID), ent.Asc(ledgerentry.FieldSeq)).
			Limit(s.exportBatch).Select(ledgerViewColumns...).All(ctx)
		if err != nil {
			return n, err
		}
		for _, e := range rows {
			w.buf = append(w.buf, `{"type":"ledger_entry","ledger_entry":`...)
			w.buf = ledgerEntryView(e, st.Currency).AppendJSON(w.buf)
			w.buf = append(w.buf, "}\n"...)
		}
		n += len(rows)
		if err := w.flush(); err != nil || len(rows) < s.exportBatch {
			return n, err
		}
		lastCompany, lastSeq = rows[len(rows)-1].CompanyID, rows[len(rows)-1].Seq
	}
}

// exportInvoices writes the store's invoices by ID.
func (s *Exports) exportInvoices(ctx context.Context, w *exportWriter, st *ent.Store) (int, error) {
	n, last := 0, ""
	now := s.clock.Now()
	// Read at most a page's worth of invoices at a time, as the invoice lists do: each batch's
	// details (invoiceDetails) are statements over the batch's keys.
	batch := min(s.exportBatch, MaxPageSize)
	for {
		client := s.db.Reader(ctx)
		rows, err := client.Invoice.Query().Where(invoice.IDGT(last)).
			Order(ent.Asc(invoice.FieldID)).Limit(batch).All(ctx)
		if err != nil {
			return n, err
		}
		d, err := s.invoices.invoiceDetails(ctx, client, rows)
		if err != nil {
			return n, err
		}
		for _, r := range rows {
			if w.buf, err = appendInvoiceLine(w.buf, invoiceView(r, d, st.Currency, now)); err != nil {
				return n, err
			}
		}
		n += len(rows)
		if err := w.flush(); err != nil || len(rows) < batch {
			return n, err
		}
		last = rows[len(rows)-1].ID
	}
}

// appendInvoiceLine appends an invoice's line. It is the one place that says how an invoice
// looks in the export: today the Invoice view that GraphQL's Invoice shows; once REST serves
// GET /v1/invoices/{id} (contract §17), this is where its view takes over.
func appendInvoiceLine(b []byte, v Invoice) ([]byte, error) {
	b = append(b, `{"type":"invoice","invoice":`...)
	b, err := appendView(b, v)
	return append(b, "}\n"...), err
}

// exportApplications writes the store's applications by ID, each as GET
// /v1/applications/{id} shows it.
func (s *Exports) exportApplications(ctx context.Context, w *exportWriter) (int, error) {
	n, last := 0, ""
	for {
		rows, err := s.db.Reader(ctx).Application.Query().Where(application.IDGT(last)).
			Order(ent.Asc(application.FieldID)).Limit(s.exportBatch).All(ctx)
		if err != nil {
			return n, err
		}
		for _, a := range rows {
			w.buf = append(w.buf, `{"type":"application","application":`...)
			if w.buf, err = appendView(w.buf, applicationView(a)); err != nil {
				return n, err
			}
			w.buf = append(w.buf, "}\n"...)
		}
		n += len(rows)
		if err := w.flush(); err != nil || len(rows) < s.exportBatch {
			return n, err
		}
		last = rows[len(rows)-1].ID
	}
}

// appendView appends v's JSON as the REST API writes a response body (httpapi.Marshal):
// compact, with <, > and & unescaped.
func appendView(b []byte, v any) ([]byte, error) {
	if a, ok := v.(JSONAppender); ok {
		return a.AppendJSON(b), nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return b, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}
