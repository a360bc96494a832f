package main

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestInvoiceCommands: invoices promise, withdraw-promise, dispute and resolve act on the
// store's invoice as its staff, print the invoice with --json, and refuse bad input (exit 2).
func TestInvoiceCommands(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	co := d.json(t, "company", "create", "--store", d.store, "--name", "Buyer", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "100.00")["id"].(string)
	d.run(t, "ledger", "record", "--company", co, "--kind", "order_placed", "--amount", "40.00", "--order", "gid://platform/Order/1").mustSucceed(t)
	invoices, err := d.service(t).Invoices.List(credittest.Staff(d.store), co, credit.InvoiceListParams{})
	if err != nil || len(invoices.Data) != 1 {
		t.Fatalf("invoices: %v %v", invoices, err)
	}
	inv := invoices.Data[0].ID

	res := d.json(t, "invoices", "promise", "--store", d.store, "--invoice", inv, "--date", "2026-03-20", "--note", "after the fair", "--staff", "Olga")
	promise, _ := res["invoice"].(map[string]any)["promise"].(map[string]any)
	if promise["promised_for"] != "2026-03-20" || promise["note"] != "after the fair" || promise["recorded_by"] != "Olga" {
		t.Errorf("invoices promise: %v", res)
	}
	if res := d.json(t, "invoices", "withdraw-promise", "--store", d.store, "--invoice", inv); res["invoice"].(map[string]any)["promise"] != nil {
		t.Errorf("invoices withdraw-promise: %v", res)
	}
	res = d.json(t, "invoices", "dispute", "--store", d.store, "--invoice", inv, "--reason", "wrong price")
	if dispute, _ := res["invoice"].(map[string]any)["dispute"].(map[string]any); dispute["reason"] != "wrong price" || dispute["opened_by"] != "command line" {
		t.Errorf("invoices dispute: %v", res)
	}
	if out := d.run(t, "invoices", "resolve", "--store", d.store, "--invoice", inv).mustSucceed(t).stdout; !strings.Contains(out, inv+": no dispute") {
		t.Errorf("invoices resolve: %q", out)
	}

	if r := d.run(t, "invoices", "promise", "--store", d.store, "--invoice", inv, "--date", "2026-12-31"); !strings.Contains(r.stderr, ": --date must be from today (2026-03-02)") {
		t.Errorf("a date too far ahead: %q", r.stderr)
	}
	other := d.json(t, "store", "create", "--name", "Other", "--currency", "EUR")["id"].(string)
	for _, args := range [][]string{
		{"invoices", "promise", "--store", d.store, "--invoice", inv, "--date", "2026-03-01"},
		{"invoices", "promise", "--store", d.store, "--invoice", inv},
		{"invoices", "dispute", "--store", d.store, "--invoice", inv, "--reason", strings.Repeat("x", 501)},
		{"invoices", "dispute", "--store", other, "--invoice", inv, "--reason", "x"},
		{"invoices", "resolve", "--invoice", inv},
	} {
		before := d.dump(t)
		if r := d.run(t, args...); r.code != exitBadInput || r.stderr == "" {
			t.Errorf("creditd %s: exit %d, stderr %q; want 2 with a reason", strings.Join(args, " "), r.code, r.stderr)
		}
		if d.dump(t) != before {
			t.Errorf("creditd %s wrote something", strings.Join(args, " "))
		}
	}
}
