package credit_test

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
)

// bufferSink is an export's sink in memory.
type bufferSink struct{ bytes.Buffer }

func (*bufferSink) Flush() error { return nil }

// TestExportRefusesBeforeStreaming: every refusal comes before the sink is opened, so a
// transport can still answer it as an error; the export itself writes header to export_end.
func TestExportRefusesBeforeStreaming(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	env.MustCompany(t, env.store, "Buyer", "100.00")
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		p     credit.ExportParams
		code  credit.Code
		param string
	}{
		{"no read_credit", apiKey(env.store, credit.ScopeReadApplications), credit.ExportParams{}, credit.CodeInsufficientScope, ""},
		{"applications without read_applications", apiKey(env.store, credit.ScopeReadCredit), credit.ExportParams{Include: []string{"applications"}}, credit.CodeInsufficientScope, ""},
		{"unknown include", apiKey(env.store, credit.ScopeReadCredit), credit.ExportParams{Include: []string{"timeline"}}, credit.CodeInvalidParameter, "include"},
		{"one known, one unknown", apiKey(env.store, credit.AllScopes...), credit.ExportParams{Include: []string{"applications,ledger"}}, credit.CodeInvalidParameter, "include"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opened := false
			_, err := env.Service.Exports.Export(tc.ctx, tc.p, func() (credit.ExportSink, error) {
				opened = true
				return &bufferSink{}, nil
			})
			wantError(t, tc.name, err, tc.code, tc.param)
			if opened {
				t.Errorf("%s: the sink was opened before the refusal", tc.name)
			}
		})
	}

	sink := &bufferSink{}
	counts, err := env.Service.Exports.Export(apiKey(env.store, credit.AllScopes...), credit.ExportParams{Include: []string{"applications"}},
		func() (credit.ExportSink, error) { return sink, nil })
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(sink.String(), "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], `{"type":"export","as_of_event":"ev_`) ||
		lines[2] != `{"type":"export_end","counts":{"companies":1,"ledger_entries":0,"invoices":0,"applications":0}}` {
		t.Fatalf("export %q", lines)
	}
	if counts.Companies != 1 || counts.Applications == nil || *counts.Applications != 0 {
		t.Fatalf("counts %+v", counts)
	}
}

// TestExportManySettledInvoices: a batch of invoices is read with their details in one
// statement, whose condition names each settled invoice; more of them than a page once went
// past SQLite's expression depth (1,000) on the benchmark's store. 1,001 settled invoices
// fail that way when read in one batch.
func TestExportManySettledInvoices(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "1000000.00")
	const n = 1001
	for i := range n {
		gid := "gid://platform/Order/" + strconv.Itoa(i+1)
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "10.00", OrderGID: gid})
		env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-10.00", OrderGID: gid})
	}
	counts, err := env.Service.Exports.Export(apiKey(env.store, credit.ScopeReadCredit), credit.ExportParams{},
		func() (credit.ExportSink, error) { return &bufferSink{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if counts.Invoices != n || counts.LedgerEntries != 2*n {
		t.Fatalf("counts %+v", counts)
	}
}
