package console_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// TestOverview: the signed-in member lands on the overview, which answers the morning's
// questions from the store's data (an invoice that fell due overnight, a company above 90% of
// its limit, one on hold, an application waiting, a failed platform delivery) and draws the
// aging and the outstanding of the last 90 days as inline SVG; the history's days are the
// ledger's balances at each day's end.
func TestOverview(t *testing.T) {
	e := newConsole(t)
	store := e.MustStore(t, "Demo Wholesale GmbH", "EUR")
	e.MustStaff(t, store, "Anna Berg", "anna@example.com", password)
	day := 24 * time.Hour
	alpen := e.MustCompany(t, store, "Alpenblick Hotels AG", "1000.00", "NET_14")
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: alpen.ID, Kind: credit.KindOpeningBalance, Amount: "100.00"})
	e.Clock.Advance(40 * day)
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: alpen.ID, Kind: credit.KindOrderPlaced, Amount: "850.00", OrderGID: "gid://platform/Order/1"})
	e.Clock.Advance(14*day + time.Hour) // due an hour ago: newly overdue
	kessler := e.MustCompany(t, store, "Brauhaus Kessler KG", "8000.00")
	if _, err := e.Service.Companies.PlaceHold(credittest.Staff(store), credit.HoldInput{CompanyID: kessler.ID}); err != nil {
		t.Fatal(err)
	}
	e.MustApplication(t, store, credit.ApplicationInput{BusinessName: "Gasthof Zur Post"})
	connectAndFail(t, e.Env, store, "demo-wholesale.myplatform.com", "wh-1")

	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	p := b.get("/").wantStatus(t, http.StatusOK)
	p.wantText(t, `aria-current="page">Overview`, "Overdue today", `class="overdue-company">Alpenblick Hotels AG</a>`,
		`<li><a href="/companies/`+alpen.ID+`">Alpenblick Hotels AG</a> · 850.00 EUR</li>`, // newly overdue
		"Alpenblick Hotels AG</a> · 95% used · 950.00 EUR outstanding",
		`<li><a href="/companies/`+kessler.ID+`">Brauhaus Kessler KG</a> · 0.00 EUR outstanding</li>`,
		`id="applications-waiting">1</a>`, `id="failed-deliveries">1</a>`, `<svg class="chart" id="aging-chart"`, `<svg class="chart" id="history-chart"`,
		"1–30: 850.00 EUR",
		// The history's y-axis: its lowest, middle and highest amounts beside their gridlines.
		`class="label scale">0.00 EUR</text>`, `class="label scale">475.00 EUR</text>`, `class="label scale">950.00 EUR</text>`)

	ov, err := e.Service.Reports.Overview(credittest.Staff(store))
	if err != nil {
		t.Fatal(err)
	}
	if len(ov.History) != credit.OverviewDays {
		t.Fatalf("%d days of history", len(ov.History))
	}
	// Day by day: 100.00 from the opening balance (54 days ago), 950.00 from the order's day
	// on (14 days ago).
	now := e.Clock.Now()
	for _, d := range ov.History {
		end := d.Day.Add(day)
		want := "0"
		switch {
		case !end.Before(now.Add(-14*day - time.Hour)):
			want = "950"
		case !end.Before(now.Add(-54*day - time.Hour)):
			want = "100"
		}
		if d.Outstanding.String() != want {
			t.Errorf("outstanding at the end of %s: %s, want %s", d.Day.Format(time.DateOnly), d.Outstanding, want)
		}
	}
	// An on-hold company's available credit is not shown as usable.
	b.get("/companies/"+kessler.ID).wantText(t, `id="available-on-hold"`, "not usable while on hold").
		wantNoText(t, `<dt>Available credit</dt><dd class="strong">`)
	b.get("/companies").wantText(t, "7,600.00 (on hold)")
	if strings.Contains(p.Body, "<script>") {
		t.Error("the overview has an inline script")
	}
}
