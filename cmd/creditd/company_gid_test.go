package main

import (
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestCompanySetGIDAndStaffNames: `company set-gid` sets and corrects a company's platform
// company GID under the --staff name on its timeline, refuses another company's GID and a
// malformed one without writing; `ledger record --staff` and `application set-status --staff`
// put the entry and the approval on the timeline, and the entry on the ledger, under that name.
func TestCompanySetGIDAndStaffNames(t *testing.T) {
	t.Parallel()
	d := newCLIDB(t)
	d.json(t, "company", "create", "--store", d.store, "--name", "Taken", "--platform-company-gid", "gid://platform/Company/1",
		"--payment-terms", "NET_30", "--credit-limit", "100.00")
	app := d.json(t, "application", "create", "--store", d.store, "--business-name", "Gasthof", "--vat-number", "DE1",
		"--contact-name", "Ann Example", "--contact-email", "ann@example.com")["id"].(string)
	d.run(t, "application", "set-status", app, "--status", "in_review", "--staff", "Olga").mustSucceed(t)
	out := d.json(t, "application", "set-status", app, "--status", "approved", "--credit-limit", "500.00", "--payment-terms", "NET_14", "--staff", "Olga")
	co := out["company"].(map[string]any)["id"].(string)
	d.run(t, "ledger", "record", "--company", co, "--kind", "opening_balance", "--amount", "50.00", "--staff", "Olga").mustSucceed(t)

	before := d.dump(t)
	for _, gid := range []string{"gid://platform/Company/1", "Company 7"} {
		if r := d.run(t, "company", "set-gid", co, "--gid", gid, "--staff", "Olga"); r.code == 0 || !strings.Contains(r.stderr, "platform_company_gid") {
			t.Errorf("set-gid %s: exit %d, stderr %q", gid, r.code, r.stderr)
		}
	}
	if d.dump(t) != before {
		t.Error("a refused set-gid changed the database")
	}
	got := d.json(t, "company", "set-gid", co, "--gid", "gid://platform/Company/7", "--staff", "Olga")
	if got["platform_company_gid"] != "gid://platform/Company/7" {
		t.Errorf("set-gid answered %v", got)
	}
	d.json(t, "company", "set-gid", co, "--gid", "gid://platform/Company/8", "--staff", "Piet")

	svc := d.service(t)
	ctx := credittest.Staff(d.store)
	page, err := svc.Timeline.List(ctx, co, credit.ListParams{})
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, e := range page.Data {
		events = append(events, string(e.Type)+" by "+e.Actor.Label)
	}
	want := []string{"platform_company_gid_changed by Piet", "platform_company_gid_changed by Olga", "ledger_entry_recorded by Olga", "application_approved by Olga"}
	if strings.Join(events, ", ") != strings.Join(want, ", ") {
		t.Errorf("timeline %v, want %v", events, want)
	}
	history, err := svc.Applications.History(ctx, app)
	if err != nil || len(history) != 2 || history[0].To != credit.AppApproved || history[0].CompanyID == nil || *history[0].CompanyID != co ||
		history[0].Actor.Label != "Olga" || history[1].From != credit.AppSubmitted || history[1].Actor.Label != "Olga" {
		t.Errorf("application history %+v %v", history, err)
	}
	ledger, err := svc.Ledger.List(ctx, co, credit.LedgerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	by, err := svc.Ledger.Recorders(ctx, co, []string{ledger.Data[0].ID})
	if err != nil || by[ledger.Data[0].ID] != (credit.Actor{Type: "staff", Label: "Olga"}) {
		t.Errorf("the entry was recorded by %v %v, want Olga", by, err)
	}
}
