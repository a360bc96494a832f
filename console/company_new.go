package console

import (
	"errors"
	"net/http"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The new company form (/companies/new): a company on credit terms without an application,
// as `creditd companies create` makes one. Every field's refusal at once, beside its field,
// from credit.CompanyErrors; the service checks them again, and finds a GID another company
// of the store has.

// newCompanyFields are the form's fields, in its order.
var newCompanyFields = []string{"name", "payment_terms", "credit_limit", "platform_company_gid"}

// newCompanyBody is the new company page.
type newCompanyBody struct {
	// Form is the refused form, nil for a fresh one.
	Form *form
}

// newCompany shows the form.
func (c *Console) newCompany(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showNewCompany(w, r, v, http.StatusOK, nil)
}

func (c *Console) showNewCompany(w http.ResponseWriter, r *http.Request, v *visit, status int, f *form) {
	p := pageFor(v, "New company", "companies")
	p.Body = newCompanyBody{Form: f}
	c.render(w, r, status, "company_new.html", p)
}

// createCompany creates the company and shows its page, or the form again with every refusal.
func (c *Console) createCompany(w http.ResponseWriter, r *http.Request, v *visit) {
	in := credit.CompanyInput{
		Name:               r.PostForm.Get("name"),
		PlatformCompanyGID: strings.TrimSpace(r.PostForm.Get("platform_company_gid")),
		CreditLimit:        v.amount(r.PostForm.Get("credit_limit")),
	}
	terms, termsErr := formTerms(r.PostForm.Get("payment_terms"), r.PostForm.Get("payment_terms_days"))
	in.PaymentTerms = terms
	errs := credit.CompanyErrors(in, v.store.Currency)
	if termsErr != nil {
		errs = withFieldError(errs, termsErr)
	}
	if len(errs) > 0 {
		f, status := v.refusedFields(r.PostForm, creditLimitParam(errs), newCompanyFields...)
		c.showNewCompany(w, r, v, status, f)
		return
	}
	co, err := c.svc.Companies.Create(v.ctx, in)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		f, status := v.refusedFields(r.PostForm, creditLimitParam([]error{err}), newCompanyFields...)
		c.showNewCompany(w, r, v, status, f)
		return
	}
	c.done(w, r, v, "/companies/"+co.ID, "Company "+co.Name+" created.")
}

// creditLimitParam files the refusals of the company's credit limit, which the domain names
// "amount", under the form's credit_limit field.
func creditLimitParam(errs []error) []error {
	out := make([]error, len(errs))
	for i, err := range errs {
		var e *credit.Error
		if errors.As(err, &e) && e.Param == "amount" {
			renamed := *e
			renamed.Param = "credit_limit"
			err = &renamed
		}
		out[i] = err
	}
	return out
}
