package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/statementpdf"
	"github.com/creditd/creditd/tenant"
)

// TestExportCommandWritesTheExport: creditd export writes the same lines as GET /v1/export
// (the same operation), gzip-compressed for a .gz name, and nothing under --out when refused.
func TestExportCommandWritesTheExport(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	svc := d.service(t)
	ctx := tenant.Staff(context.Background(), d.store, "test staff")
	co, err := svc.Companies.Create(ctx, credit.CompanyInput{Name: "Buyer", PlatformCompanyGID: "gid://platform/Company/1", PaymentTerms: "NET_30", CreditLimit: "100"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := svc.Ledger.Record(ctx, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "10", OrderGID: "gid://platform/Order/1"}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "export.ndjson.gz")
	counts := d.json(t, "export", "--store", d.store, "--out", out)
	if counts["companies"] != 1.0 || counts["ledger_entries"] != 1.0 || counts["invoices"] != 1.0 || counts["applications"] != 0.0 {
		t.Fatalf("counts %v", counts)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		var l struct{ Type string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		types = append(types, l.Type)
	}
	if want := []string{"export", "company", "ledger_entry", "invoice", "export_end"}; len(types) != len(want) || types[0] != want[0] || types[4] != want[4] {
		t.Fatalf("lines %v, want %v", types, want)
	}

	// An unknown store writes nothing.
	missing := filepath.Join(t.TempDir(), "none.ndjson")
	if r := d.run(t, "export", "--store", "st_nope", "--out", missing); r.code == 0 {
		t.Fatalf("exported an unknown store: %+v", r)
	}
	if entries, _ := os.ReadDir(filepath.Dir(missing)); len(entries) != 0 {
		t.Fatalf("a refused export left %v", entries)
	}
}

// TestStatementCommandWritesThePDF: creditd statement writes the PDF GET
// /v1/companies/{id}/statement serves for Accept: application/pdf (the same operation and
// document: the same bytes), and refuses a bad period naming its flag, writing nothing.
func TestStatementCommandWritesThePDF(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	svc := d.service(t)
	ctx := tenant.Staff(context.Background(), d.store, "test staff")
	co, err := svc.Companies.Create(ctx, credit.CompanyInput{Name: "Buyer", PlatformCompanyGID: "gid://platform/Company/1", PaymentTerms: "NET_30", CreditLimit: "100000"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []credit.LedgerEntryInput{
		{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "12345.60", OrderGID: "gid://platform/Order/1"},
		{CompanyID: co.ID, Kind: credit.KindPayment, Amount: "-2000.10"},
	} {
		if _, _, err := svc.Ledger.Record(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	today := cliStart.Format(time.DateOnly) // the commands' clock
	out := filepath.Join(t.TempDir(), "statement.pdf")
	res := d.json(t, "statement", "--store", d.store, "--company", co.ID, "--from", today, "--to", today, "--out", out)
	if res["entries"] != 2.0 || res["file"] != out {
		t.Fatalf("result %v", res)
	}
	pdf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	s, err := svc.Reports.Statement(ctx, co.ID, today, today)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	if err := statementpdf.Write(&want, s); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pdf, want.Bytes()) {
		t.Error("the command's PDF is not the statement's document")
	}
	text := credittest.PDFText(t, pdf)
	for _, w := range []string{"Buyer", co.ID, "12,345.60", "-2,000.10", "10,345.50", "Page 1 of 1"} {
		if !strings.Contains(text, w) {
			t.Errorf("the PDF's text lacks %q:\n%s", w, text)
		}
	}

	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"--from", today, "--to", "2999-01-01"}},
		{[]string{"--from", "yesterday", "--to", today}},
		{[]string{"--to", today}},
	} {
		args := append([]string{"statement", "--store", d.store, "--company", co.ID, "--out", filepath.Join(dir, "x.pdf")}, c.args...)
		if r := d.run(t, args...); r.code == 0 {
			t.Errorf("%v: exit 0", c.args)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("refused statements left %v", entries)
	}
}
