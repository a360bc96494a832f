package console

import (
	"fmt"
	"net/http"
)

// A company's platform company GID on its page: set or corrected by staff (it is how the
// platform's deliveries name the company), the deliveries that failed for this company listed
// with Retry, and the way back to the application whose approval created it.

// setCompanyGID sets or corrects the company's platform company GID, under the member's name.
func (c *Console) setCompanyGID(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	co, err := c.svc.Companies.SetPlatformCompanyGID(v.ctx, id, r.PostForm.Get("platform_company_gid"))
	if err != nil {
		c.refusedOnCompany(w, r, v, "gid", err, "platform_company_gid")
		return
	}
	msg := co.Name + "'s platform company GID is " + derefString(co.PlatformCompanyGID) + "."
	failed, err := c.svc.Inbox.FailedFor(v.ctx, co.ID)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	if n := len(failed); n > 0 {
		msg += fmt.Sprintf(" %d failed platform %s for it can now be retried below.", n, plural(n, "delivery", "deliveries"))
	}
	c.done(w, r, v, companyPath(id)+"#platform-company", msg)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// companyPlatform adds the platform company's part of a company's page to body.
func (c *Console) companyPlatform(v *visit, body *companyBody) error {
	failed, err := c.svc.Inbox.FailedFor(v.ctx, body.Company.ID)
	if err != nil {
		return err
	}
	body.FailedDeliveries = failed
	body.ApplicationID, err = c.svc.Applications.OfCompany(v.ctx, body.Company.ID)
	return err
}

// retryBack is where a retry returns: the company page it was made from, or the inbox as it was
// filtered. Only a company ID is taken from the form, never a path.
func retryBack(r *http.Request) string {
	if id := r.PostForm.Get("company"); id != "" {
		return companyPath(id) + "#platform-company"
	}
	return "/platform" + buildQuery("status", r.PostForm.Get("status"))
}

// companyForm takes the company page's forms at the page's own address, by the form's name, so
// that a refused form shown again leaves the browser on the company's page.
func (c *Console) companyForm(w http.ResponseWriter, r *http.Request, v *visit) {
	switch r.PostForm.Get("form") {
	case "hold":
		c.placeHold(w, r, v)
	case "lift":
		c.liftHold(w, r, v)
	case "limit":
		c.setCreditLimit(w, r, v)
	case "adjust":
		c.createAdjustment(w, r, v)
	case "entry":
		c.recordLedgerEntry(w, r, v)
	case "gid":
		c.setCompanyGID(w, r, v)
	case "promise":
		c.recordPromise(w, r, v)
	case "withdraw":
		c.withdrawPromise(w, r, v)
	case "dispute":
		c.openDispute(w, r, v)
	case "resolve":
		c.resolveDispute(w, r, v)
	default:
		// Another store's company or an unknown one is not found, whatever the form.
		if _, err := c.svc.Companies.Get(v.ctx, r.PathValue("id")); err != nil {
			c.fail(w, r, v, err)
			return
		}
		c.problem(w, r, v, http.StatusBadRequest, "This form is not one of the company page's.")
	}
}
