package console

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

const applicationsPerPage = 25

// applicationsBody is the applications page.
type applicationsBody struct {
	Status   string
	Statuses []string
	Page     credit.Page[credit.Application]
	Next     string
	Error    string
}

// applications lists the store's applications, newest first, with a status filter.
func (c *Console) applications(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	body := applicationsBody{Status: q.Get("status"), Statuses: credit.ApplicationStatuses}
	limit := applicationsPerPage
	page, err := c.svc.Applications.List(v.ctx, credit.ApplicationListParams{
		ListParams: credit.ListParams{Limit: &limit, Cursor: q.Get("cursor")},
		Status:     body.Status,
	})
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
	if page.NextCursor != nil {
		body.Next = buildQuery("status", body.Status, "cursor", *page.NextCursor)
	}
	p := pageFor(v, "Applications", "applications")
	p.Notice = c.takeNotice(r, v)
	p.Body = body
	c.render(w, r, status, "applications.html", p)
}

// applicationBody is an application's page.
type applicationBody struct {
	Application credit.Application
	// Next are the statuses the application may move to (contract §5).
	Next []string
	// Forms are refused transition forms, by target status.
	Forms map[string]*form
	// Error is the refusal of a transition the page does not offer (the application moved on
	// meanwhile, or the form was not the console's).
	Error string
	// History is the application's status changes, newest first, with who made each.
	History []credit.ApplicationChange
}

// application shows an application with its contact and the transitions it allows.
func (c *Console) application(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showApplication(w, r, v, http.StatusOK, c.takeNotice(r, v), nil)
}

func (c *Console) showApplication(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, forms map[string]*form) {
	a, err := c.svc.Applications.Get(v.ctx, r.PathValue("id"))
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	history, err := c.svc.Applications.History(v.ctx, a.ID)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	body := applicationBody{Application: a, Next: credit.NextApplicationStatuses(a.Status), Forms: forms, History: history}
	for to, f := range forms {
		if !slices.Contains(body.Next, to) {
			body.Error = f.FormError()
			for _, msg := range f.Errors {
				body.Error = msg
			}
		}
	}
	p := pageFor(v, a.BusinessName, "applications")
	p.Notice = notice
	p.Body = body
	c.render(w, r, status, "application.html", p)
}

// setApplicationStatus moves an application along its workflow; approving creates the company
// with the limit and terms asked for, and leads to its page.
func (c *Console) setApplicationStatus(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	to := r.PostForm.Get("status")
	in := credit.StatusChange{ApplicationID: id, Status: to}
	var a credit.Application
	var co *credit.Company
	if to == credit.AppApproved {
		in.CreditLimit = v.amount(r.PostForm.Get("credit_limit"))
		in.PlatformCompanyGID = strings.TrimSpace(r.PostForm.Get("platform_company_gid"))
		terms, termsErr := formTerms(r.PostForm.Get("payment_terms"), r.PostForm.Get("payment_terms_days"))
		in.PaymentTerms = terms
		// Every field's refusal at once, beside its field; the domain checks them again.
		errs := credit.ApprovalErrors(in.CreditLimit, in.PaymentTerms, in.PlatformCompanyGID, v.store.Currency)
		if termsErr != nil {
			errs = slices.DeleteFunc(errs, func(err error) bool { return httpapi.Describe(err).Param == "payment_terms" })
			errs = append(errs, termsErr)
		}
		if len(errs) > 0 {
			f, status := v.refusedFields(r.PostForm, errs, "credit_limit", "payment_terms", "platform_company_gid")
			c.showApplication(w, r, v, status, "", map[string]*form{to: f})
			return
		}
	}
	a, co, err := c.svc.Applications.SetStatus(v.ctx, in)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		if p.Param == "amount" {
			// The approval's only amount is the new company's credit limit.
			p.Param = "credit_limit"
		}
		c.showApplication(w, r, v, p.Status, "", map[string]*form{to: refusedForm(r.PostForm, p, "credit_limit", "payment_terms", "platform_company_gid")})
		return
	}
	if co != nil {
		msg := "Application approved: " + co.Name + " is a company with a credit limit of " + formatMoney(co.CreditLimit) + " on " + credit.FormatPaymentTerms(co.PaymentTerms) + "."
		if co.PlatformCompanyGID == nil {
			msg += " It has no platform company GID yet: set it below, or the platform's deliveries for it fail."
		}
		c.done(w, r, v, companyPath(co.ID), msg)
		return
	}
	c.done(w, r, v, "/applications/"+url.PathEscape(a.ID), "The application is now "+strings.ToLower(humanLabel(a.Status))+".")
}
