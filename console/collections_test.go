package console_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/creditd/creditd/credittest"
)

// TestCollectionsPage: the collections page shows today's reminders by level, the promises
// due and broken, and the open disputes, each linking to its company's invoice; from empty
// to each, as the sweep and staff's writes through the company page make them.
func TestCollectionsPage(t *testing.T) {
	e := newInvoiceEnv(t)
	b, path, inv := e.b, "/companies/"+e.company.ID, e.invoice.ID
	b.get("/collections").wantStatus(t, http.StatusOK).
		wantText(t, "No reminder fell due today.", "No promise is due.", "No promise is broken.", "No invoice is disputed.", "no reminder schedule").
		wantText(t, `<a href="/collections" aria-current="page">Collections</a>`)

	b.follow(b.post("/settings/reminders", url.Values{"days": {"1,7"}}))
	b.follow(b.post(path, url.Values{"form": {"promise"}, "invoice": {inv}, "promised_for": {"2026-04-03"}, "note": {"by transfer"}}))
	link := `<a href="` + path + `#invoice-` + inv + `">Alpenblick Hotels AG</a>`
	// A month on, the session has expired: sign in again.
	e.Clock.Set(time.Date(2026, 4, 3, 10, 0, 0, 0, time.UTC))
	b.mustSignIn("anna@example.com", password)
	b.get("/collections").wantText(t, "schedule</a> is 1,7 days", link, "for <strong>2026-04-03</strong> · by transfer").
		wantText(t, "No promise is broken.", "No reminder fell due today.")

	// The day after the promise: broken, and the reminder of level 1 is due.
	e.Clock.Set(time.Date(2026, 4, 4, 10, 0, 0, 0, time.UTC))
	b.mustSignIn("anna@example.com", password)
	if _, err := e.Service.Maintenance.SweepReminders(context.Background()); err != nil {
		t.Fatal(err)
	}
	b.get("/collections").wantText(t, `<h3 id="level-1">Level 1</h3>`, "No promise is due.", "; broken ", link).
		wantText(t, "No invoice is disputed.")
	b.get(path).wantText(t, "Reminders sent: level 1 (2026-04-02)", "Promise broken</span>")

	b.follow(b.post(path, url.Values{"form": {"dispute"}, "invoice": {inv}, "reason": {"Goods damaged in transit"}}))
	b.get("/collections").wantText(t, "Goods damaged in transit<br><span class=\"muted small\">by Anna Berg")

	// Another store's staff see none of it.
	other := e.MustStore(t, "Other Wholesale", "EUR")
	e.MustStaff(t, other, "Otto Other", "otto@example.com", password)
	o := e.browser(t)
	o.mustSignIn("otto@example.com", password)
	o.get("/collections").wantText(t, "No reminder fell due today.", "No promise is broken.", "No invoice is disputed.").
		wantNoText(t, "Alpenblick")
	if c, err := e.Service.Reports.Collections(credittest.Staff(other)); err != nil || len(c.Disputes.Data) != 0 {
		t.Fatalf("another store's collections: %+v %v", c, err)
	}
}
