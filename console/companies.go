package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// Page sizes of the console's lists: a laptop screen's worth.
const (
	companiesPerPage = 25
	ledgerPerPage    = 15
	timelinePerPage  = 15
	invoicesPerPage  = 15
)

// companiesColumns are the companies list's sortable columns; by name is the default and the
// only order that pages with the domain's cursor.
var companiesColumns = []sortColumn[credit.Company]{
	{Key: "name", Title: "Name"},
	{Key: "status", Title: "Status", text: func(c credit.Company) string { return c.Status }},
	{Key: "outstanding", Title: "Outstanding", amount: func(c credit.Company) credit.Money { return c.Outstanding }},
	{Key: "available", Title: "Available", amount: func(c credit.Company) credit.Money { return c.AvailableCredit }},
}

// companiesBody is the companies page.
type companiesBody struct {
	Query  string
	Status string
	Cursor string
	Page   credit.Page[credit.Company]
	// Totals are the store's figures, for the table's totals row.
	Totals credit.Receivables
	// Headings sort the list by name, status, outstanding or available credit.
	Headings map[string]sortHeading
	// First links the first page in the current order, "" on the first page.
	First string
	// Next is the query string of the next page, "" on the last.
	Next  string
	Error string
}

// companies lists the store's companies by name (paged with the domain's cursor), or sorted by
// another column like the receivables (all the matching companies read, then paged by number),
// with a name search and a status filter.
func (c *Console) companies(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	body := companiesBody{Query: strings.TrimSpace(q.Get("q")), Status: q.Get("status"), Cursor: q.Get("cursor")}
	col, desc := pickSort(companiesColumns, q.Get("sort"), q.Get("order"), 0, false)
	sortKey, order := "", ""
	if col != 0 || desc {
		sortKey, order = companiesColumns[col].Key, orderName(desc)
	}
	// The APIs' search: case and accents ignored ("cafe" finds "Café Morgenrot").
	params := credit.CompanyListParams{Status: body.Status, ByName: true}
	if body.Query != "" {
		params.Search = &body.Query
	}
	var page credit.Page[credit.Company]
	var err error
	if sortKey == "" {
		limit := companiesPerPage
		params.ListParams = credit.ListParams{Limit: &limit, Cursor: body.Cursor}
		page, err = c.svc.Companies.List(v.ctx, params)
		if page.NextCursor != nil {
			body.Next = buildQuery("q", body.Query, "status", body.Status, "cursor", *page.NextCursor)
		}
		if body.Cursor != "" {
			body.First = "/companies" + buildQuery("q", body.Query, "status", body.Status)
		}
	} else {
		number, _ := strconv.Atoi(q.Get("page"))
		number = max(number, 1)
		var all []credit.Company
		all, err = c.allCompanies(v, params)
		sortRows(all, companiesColumns[col], func(c credit.Company) string { return c.Name }, desc)
		from := min((number-1)*companiesPerPage, len(all))
		to := min(from+companiesPerPage, len(all))
		page.Data = all[from:to]
		if to < len(all) {
			body.Next = buildQuery("q", body.Query, "status", body.Status, "sort", sortKey, "order", order, "page", strconv.Itoa(number+1))
		}
		if number > 1 {
			body.First = "/companies" + buildQuery("q", body.Query, "status", body.Status, "sort", sortKey, "order", order)
		}
	}
	status := http.StatusOK
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		status, body.Error = p.Status, sentence(p.Message)
	}
	body.Page = page
	if body.Totals, err = c.svc.Reports.Receivables(v.ctx); err != nil {
		c.fail(w, r, v, err)
		return
	}
	body.Headings = map[string]sortHeading{}
	for _, h := range sortHeadings(companiesColumns, col, desc, func(key, order string) string {
		return "/companies" + buildQuery("q", body.Query, "status", body.Status, "sort", key, "order", order)
	}) {
		body.Headings[h.Title] = h
	}
	p := pageFor(v, "Companies", "companies")
	p.Notice = c.takeNotice(r, v)
	p.Body = body
	c.render(w, r, status, "companies.html", p)
}

// allCompanies reads every company the list's filters keep, a page of the largest size at a
// time, for an order the domain's cursor does not page by.
func (c *Console) allCompanies(v *visit, params credit.CompanyListParams) ([]credit.Company, error) {
	limit := credit.MaxPageSize
	params.Limit = &limit
	var all []credit.Company
	for {
		page, err := c.svc.Companies.List(v.ctx, params)
		if err != nil {
			return nil, err
		}
		all = append(all, page.Data...)
		if page.NextCursor == nil {
			return all, nil
		}
		params.Cursor = *page.NextCursor
	}
}

// companyBody is a company's page.
type companyBody struct {
	Company credit.Company
	// Aging and Invoices are the company's open amounts by days past due and its open
	// invoices, oldest first.
	Aging    credit.Aging
	Invoices credit.Page[credit.Invoice]
	// NotInvoiced is what the aging leaves of the outstanding balance (amended §15).
	NotInvoiced credit.Money
	// InvoicesFirst is true on the first page of open invoices; NextInvoices links the next.
	InvoicesFirst bool
	NextInvoices  string
	Ledger        credit.Page[credit.LedgerEntry]
	Timeline      credit.Page[credit.TimelineEvent]
	// LedgerFirst and TimelineFirst are true on each list's first page.
	LedgerFirst, TimelineFirst bool
	NextLedger, NextTimeline   string
	// Forms are the page's forms shown again after a refusal, by name.
	Forms map[string]*form
	Kinds []string
	// FailedDeliveries are the platform's failed deliveries for this company (by ID or by
	// its GID), to retry; ApplicationID is the application whose approval created it, or "".
	FailedDeliveries []credit.InboxDelivery
	ApplicationID    string
	// RecordedBy names who recorded each ledger entry of the page, by entry ID ("" for entries
	// recorded before it was kept).
	RecordedBy map[string]string
	// StatementFrom and StatementTo are the statement picker's default period (the last full
	// month); Today is the latest day it may end on, and the earliest a promise may be for.
	StatementFrom, StatementTo, Today string
	// PromiseLast is the latest day a promise may be for.
	PromiseLast string
	// Behaviour is how the company paid over the default window (contract §17).
	Behaviour credit.PaymentBehaviour
}

// company shows a company: its figures and hold, its ledger and its timeline (each paged on
// its own), and the forms that act on it.
func (c *Console) company(w http.ResponseWriter, r *http.Request, v *visit) {
	notice := c.takeNotice(r, v)
	c.showCompany(w, r, v, http.StatusOK, notice, nil)
}

// showCompany renders a company's page with status; forms carries a refused form.
func (c *Console) showCompany(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, forms map[string]*form) {
	id := r.PathValue("id")
	co, err := c.svc.Companies.Get(v.ctx, id)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	q := url.Values{}
	if r.Method == http.MethodGet {
		q = r.URL.Query()
	}
	ledgerCursor, timelineCursor, invoicesCursor := q.Get("ledger"), q.Get("timeline"), q.Get("invoices")
	ledgerLimit, timelineLimit, invoicesLimit := ledgerPerPage, timelinePerPage, invoicesPerPage
	ledger, err := c.svc.Ledger.List(v.ctx, co.ID, credit.LedgerListParams{ListParams: credit.ListParams{Limit: &ledgerLimit, Cursor: ledgerCursor}})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	timeline, err := c.svc.Timeline.List(v.ctx, co.ID, credit.ListParams{Limit: &timelineLimit, Cursor: timelineCursor})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	invoices, err := c.svc.Invoices.List(v.ctx, co.ID, credit.InvoiceListParams{Status: credit.InvoiceOpen,
		ListParams: credit.ListParams{Limit: &invoicesLimit, Cursor: invoicesCursor}})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	agings, err := c.svc.Reports.CompanyAging(v.ctx, []string{co.ID})
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	behaviour, err := c.svc.Reports.CompanyPaymentBehaviour(v.ctx, co.ID, credit.BehaviourWindowDays)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	entryIDs := make([]string, len(ledger.Data))
	for i, e := range ledger.Data {
		entryIDs[i] = e.ID
	}
	recorders, err := c.svc.Ledger.Recorders(v.ctx, co.ID, entryIDs)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	recordedBy := make(map[string]string, len(recorders))
	for id, a := range recorders {
		recordedBy[id] = formatActor(a)
	}
	body := companyBody{Company: co, Behaviour: behaviour, Aging: agings[co.ID], NotInvoiced: credit.NotInvoiced(co.Outstanding, agings[co.ID]), Invoices: invoices, Ledger: ledger, Timeline: timeline, Forms: forms, Kinds: credit.PlatformLedgerKinds,
		RecordedBy: recordedBy, LedgerFirst: ledgerCursor == "", TimelineFirst: timelineCursor == "", InvoicesFirst: invoicesCursor == ""}
	now := c.svc.Now().UTC()
	body.StatementFrom, body.StatementTo = statementPeriod(now)
	body.Today, body.PromiseLast = now.Format(time.DateOnly), now.AddDate(0, 0, credit.MaxPromiseDays).Format(time.DateOnly)
	if err := c.companyPlatform(v, &body); err != nil {
		c.fail(w, r, v, err)
		return
	}
	if invoices.NextCursor != nil {
		body.NextInvoices = buildQuery("invoices", *invoices.NextCursor)
	}
	if ledger.NextCursor != nil {
		body.NextLedger = buildQuery("ledger", *ledger.NextCursor, "timeline", timelineCursor)
	}
	if timeline.NextCursor != nil {
		body.NextTimeline = buildQuery("ledger", ledgerCursor, "timeline", *timeline.NextCursor)
	}
	p := pageFor(v, co.Name, "companies")
	p.Notice = notice
	p.Body = body
	c.render(w, r, status, "company.html", p)
}

// refusedOnCompany shows a company's page again with the refused form, its values and the
// refusal's message, with the refusal's status. An unknown company (or another store's) is
// the not-found page, and a failure of the service the error page.
func (c *Console) refusedOnCompany(w http.ResponseWriter, r *http.Request, v *visit, name string, err error, fields ...string) {
	p := httpapi.Describe(err)
	if p.Code == credit.CodeNotFound || p.Status >= 500 {
		c.fail(w, r, v, err)
		return
	}
	c.showCompany(w, r, v, p.Status, "", map[string]*form{name: refusedForm(r.PostForm, p, fields...)})
}

// refusedFieldsOnCompany shows a company's page again with a form whose fields the domain's
// checker refused, every refusal beside its field, with the first refusal's status.
func (c *Console) refusedFieldsOnCompany(w http.ResponseWriter, r *http.Request, v *visit, name string, errs []error, fields ...string) {
	f, status := v.refusedFields(r.PostForm, errs, fields...)
	c.showCompany(w, r, v, status, "", map[string]*form{name: f})
}

// optional returns a pointer to a trimmed form value, nil when it is empty.
func optional(values url.Values, name string) *string {
	s := strings.TrimSpace(values.Get(name))
	if s == "" {
		return nil
	}
	return &s
}

func companyPath(id string) string { return "/companies/" + url.PathEscape(id) }

// placeHold places a manual hold under the member's name.
func (c *Console) placeHold(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	res, err := c.svc.Companies.PlaceHold(v.ctx, credit.HoldInput{CompanyID: id, Note: optional(r.PostForm, "note")})
	if err != nil {
		c.refusedOnCompany(w, r, v, "hold", err, "note")
		return
	}
	c.done(w, r, v, companyPath(id), res.Company.Name+" is on hold.")
}

// liftHold lifts the company's hold; an unpaid overdue hold is refused with the API's message.
func (c *Console) liftHold(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	res, err := c.svc.Companies.LiftHold(v.ctx, id)
	if p := httpapi.Describe(err); err != nil && p.Code == credit.CodeHoldNotLiftable {
		// The page offers no lift for such a hold; a stale page or a second tab still lands on
		// the company's page, with the reason, rather than on the form's address.
		c.done(w, r, v, companyPath(id)+"#hold", sentence(p.Message))
		return
	}
	if err != nil {
		c.refusedOnCompany(w, r, v, "lift", err)
		return
	}
	msg := "The hold on " + res.Company.Name + " is lifted."
	if res.Company.Hold != nil {
		msg += " An overdue invoice put it on an automatic hold at once."
	}
	c.done(w, r, v, companyPath(id), msg)
}

// setCreditLimit changes the credit limit.
func (c *Console) setCreditLimit(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	in := credit.CreditLimitInput{
		CompanyID: id,
		Amount:    credit.Amount(v.amount(r.PostForm.Get("amount"))),
		Reason:    optional(r.PostForm, "reason"),
	}
	// Every field's refusal at once, beside its field; the domain checks them again.
	if errs := credit.CreditLimitErrors(in, v.store.Currency); len(errs) > 0 {
		c.refusedFieldsOnCompany(w, r, v, "limit", errs, "amount", "reason")
		return
	}
	res, err := c.svc.Companies.SetCreditLimit(v.ctx, in)
	if err != nil {
		c.refusedOnCompany(w, r, v, "limit", err, "amount", "reason")
		return
	}
	c.done(w, r, v, companyPath(id), "Credit limit changed from "+formatMoney(res.PreviousCreditLimit)+" to "+formatMoney(res.Company.CreditLimit)+".")
}

// createAdjustment makes an adjustment through the API's own operation, so it appears on the
// timeline under the member's name like an API key's.
func (c *Console) createAdjustment(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	note := r.PostForm.Get("note")
	in := credit.AdjustmentInput{
		CompanyID: id,
		Amount:    credit.Amount(v.amount(r.PostForm.Get("amount"))),
		Note:      &note,
	}
	if errs := credit.AdjustmentErrors(in, v.store.Currency); len(errs) > 0 {
		c.refusedFieldsOnCompany(w, r, v, "adjust", errs, "amount", "note")
		return
	}
	res, err := c.svc.Ledger.CreateAdjustment(v.ctx, in)
	if err != nil {
		c.refusedOnCompany(w, r, v, "adjust", err, "amount", "note")
		return
	}
	c.done(w, r, v, companyPath(id), "Adjustment of "+formatMoney(res.LedgerEntry.Amount)+" recorded; outstanding is now "+formatMoney(res.Company.Outstanding)+".")
}

// recordLedgerEntry records an entry from the platform's side (an order, a payment, a refund,
// a cancellation, an opening balance), as the command line's ledger record does.
func (c *Console) recordLedgerEntry(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	kind := r.PostForm.Get("kind")
	amount, signErr := credit.SignedByKind(kind, v.amount(r.PostForm.Get("amount")))
	in := credit.LedgerEntryInput{
		CompanyID: id,
		Kind:      kind,
		Amount:    amount,
		OrderGID:  strings.TrimSpace(r.PostForm.Get("order")),
		Note:      strings.TrimSpace(r.PostForm.Get("note")),
	}
	var atErr error
	if at := strings.TrimSpace(r.PostForm.Get("occurred_at")); at != "" {
		ts, err := credit.ParseTypedTime(at, "occurred_at")
		if err != nil {
			atErr = err
		} else {
			in.OccurredAt = &ts
		}
	}
	errs := credit.LedgerEntryErrors(in, v.store.Currency)
	for _, err := range []error{signErr, atErr} {
		if err != nil {
			errs = withFieldError(errs, err)
		}
	}
	if len(errs) > 0 {
		c.refusedFieldsOnCompany(w, r, v, "entry", errs, "kind", "amount", "order", "note", "occurred_at")
		return
	}
	e, co, err := c.svc.Ledger.Record(v.ctx, in)
	if err != nil {
		c.refusedOnCompany(w, r, v, "entry", err, "kind", "amount", "order", "note", "occurred_at")
		return
	}
	// The figure as the person entered it: a payment of 2,950.00, which the ledger records as
	// lowering what is outstanding.
	shown := e.Amount
	if credit.ReducesOutstanding(e.Kind) {
		shown.Amount = strings.TrimPrefix(shown.Amount, "-")
	}
	c.done(w, r, v, companyPath(id), humanLabel(e.Kind)+" of "+formatMoney(shown)+" recorded; outstanding is now "+formatMoney(co.Outstanding)+".")
}
