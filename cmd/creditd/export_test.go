package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/creditd/creditd/credit"
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
