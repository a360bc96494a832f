package console_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
)

// timelineRow matches a row of a company's timeline: its event and who made it.
func timelineRow(event string) *regexp.Regexp {
	return regexp.MustCompile(`<tr><td class="when">[^<]*</td><td>` + regexp.QuoteMeta(event) + `</td><td><span class="actor actor-([a-z_]+)">([^<]*)</span></td><td>([^<]*)</td>`)
}

// section is the part of a page from the element with id on to the end of its section.
func section(body, id string) string {
	i := strings.Index(body, `id="`+id+`"`)
	if i < 0 {
		return ""
	}
	return body[i : i+strings.Index(body[i:], "</section>")]
}

// TestAuditTrailAndCompanyGID walks issue 31's audit trail and GID through the console: a
// payment recorded by a member is on the ledger and the timeline under their name; an approval
// without a GID is on the new company's timeline, links both ways and says what is missing;
// the GID set on the company's page is on the timeline, a GID of another company is refused
// beside its field with nothing written, and the delivery that failed for want of it is
// listed on the company's page and applied by its Retry there.
func TestAuditTrailAndCompanyGID(t *testing.T) {
	e := newConsole(t)
	store := e.MustStore(t, "Demo Wholesale GmbH", "EUR")
	e.MustStaff(t, store, "Anna Berg", "anna@example.com", password)
	b := e.browser(t)
	b.mustSignIn("anna@example.com", password)
	alpen := e.MustCompany(t, store, "Alpenblick Hotels AG", "25000.00") // gid://platform/Company/42
	e.MustRecord(t, credit.LedgerEntryInput{CompanyID: alpen.ID, Kind: credit.KindOrderPlaced, Amount: "4800.00", OrderGID: "gid://platform/Order/5001"})

	// A payment recorded in the console: the ledger's "By" and the timeline name Anna.
	path := "/companies/" + alpen.ID
	b.get(path)
	page := b.follow(b.post(path+"/ledger", url.Values{"kind": {credit.KindPayment}, "amount": {"1200.00"}}))
	page.wantText(t, "Payment of 1,200.00 EUR recorded")
	if !regexp.MustCompile(`<td>Payment</td><td class="num">−1,200\.00 EUR</td><td class="num">3,600\.00 EUR</td><td></td><td></td><td>Anna Berg</td>`).MatchString(section(page.Body, "ledger-title")) {
		t.Errorf("the ledger does not say Anna Berg recorded the payment:\n%s", section(page.Body, "ledger-title"))
	}
	if m := timelineRow("Ledger entry recorded").FindStringSubmatch(section(page.Body, "timeline-title")); m == nil || m[1] != "staff" || m[2] != "Anna Berg" || !strings.Contains(m[3], "Kind: payment") {
		t.Errorf("the timeline does not show the payment under Anna Berg: %v\n%s", m, section(page.Body, "timeline-title"))
	}

	// Approve an application without a GID.
	app := e.MustApplication(t, store, credit.ApplicationInput{BusinessName: "Bergbäckerei Huber"})
	b.get("/applications/" + app.ID)
	b.follow(b.post("/applications/"+app.ID+"/status", url.Values{"status": {credit.AppInReview}}))
	refused := b.post("/applications/"+app.ID+"/status", url.Values{"status": {credit.AppApproved}, "credit_limit": {"6000.00"}, "payment_terms": {"other"}, "payment_terms_days": {"x"}})
	refused.wantStatus(t, http.StatusUnprocessableEntity).wantText(t, "The days to pay must be a whole number from 1 to 365.", `value="6000.00"`)
	approved := b.post("/applications/"+app.ID+"/status", url.Values{"status": {credit.AppApproved}, "credit_limit": {"6000.00"}, "payment_terms": {"other"}, "payment_terms_days": {"21"}})
	co := b.follow(approved)
	co.wantText(t, "on Net 21.", "It has no platform company GID yet", `id="no-gid"`, `id="company-application"`)
	huberID := strings.TrimPrefix(approved.Location, "/companies/")
	if m := timelineRow("Application approved").FindStringSubmatch(section(co.Body, "timeline-title")); m == nil || m[2] != "Anna Berg" || !strings.Contains(m[3], app.ID) {
		t.Errorf("the new company's timeline lacks the approval under Anna Berg: %v\n%s", m, section(co.Body, "timeline-title"))
	}
	// The application's history names who moved it, and links the company its approval created.
	b.get("/applications/"+app.ID).wantText(t, `<a href="/companies/`+huberID+`">the company it created</a>`,
		`<td>In review → Approved · <a href="/companies/`+huberID+`">company created</a></td><td><span class="actor actor-staff">Anna Berg</span></td>`,
		`<td>Submitted → In review</td><td><span class="actor actor-staff">Anna Berg</span></td>`)

	// The platform's payment for the customer fails until the GID is set.
	failed := connectAndFail(t, e.Env, store, "demo-wholesale.myplatform.com", "wh-payment-7001")
	b.get("/companies/"+huberID).wantNoText(t, `id="retry-`+failed+`"`)
	// Another company's GID is refused beside the field, and nothing is written.
	before, _ := e.Service.Timeline.List(credittest.Staff(store), huberID, credit.ListParams{})
	taken := b.post("/companies/"+huberID+"/platform-company-gid", url.Values{"platform_company_gid": {"gid://platform/Company/42"}})
	taken.wantStatus(t, http.StatusUnprocessableEntity).wantText(t, `id="company-gid-error">Platform company GID gid://platform/Company/42 already belongs to Alpenblick Hotels AG (`+alpen.ID+`).`, `value="gid://platform/Company/42"`)
	if taken.Location != "" {
		t.Errorf("a refused form redirected to %s", taken.Location)
	}
	after, _ := e.Service.Timeline.List(credittest.Staff(store), huberID, credit.ListParams{})
	if len(after.Data) != len(before.Data) {
		t.Errorf("a refused GID wrote to the timeline: %d events, were %d", len(after.Data), len(before.Data))
	}
	set := b.follow(b.post("/companies/"+huberID+"/platform-company-gid", url.Values{"platform_company_gid": {unknownCompanyGID}}))
	set.wantText(t, "Bergbäckerei Huber's platform company GID is "+unknownCompanyGID+". 1 failed platform delivery for it can now be retried below.",
		`id="retry-`+failed+`"`, "120.00 EUR").wantNoText(t, `id="no-gid"`)
	if m := timelineRow("Platform company GID changed").FindStringSubmatch(section(set.Body, "timeline-title")); m == nil || m[2] != "Anna Berg" || !strings.Contains(m[3], unknownCompanyGID) {
		t.Errorf("the GID change is not on the timeline under Anna Berg: %v", m)
	}
	retried := b.post("/platform/deliveries/"+failed+"/retry", url.Values{"company": {huberID}})
	if retried.Location != "/companies/"+huberID+"#platform-company" {
		t.Fatalf("Retry from the company page returns to %q", retried.Location)
	}
	done := b.follow(retried).wantText(t, "Delivery "+failed+" is applied.").wantNoText(t, `id="retry-`+failed+`"`)
	if !strings.Contains(section(done.Body, "ledger-title"), "Commerce platform") {
		t.Errorf("the ledger does not say the platform recorded the retried payment:\n%s", section(done.Body, "ledger-title"))
	}
}
