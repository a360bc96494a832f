package console

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
	"github.com/creditd/creditd/statementpdf"
)

// The company page's collection work (contract §17): a promise to pay and a dispute on each
// open invoice, and the statement of account as a PDF for a period.

// invoiceForm is the name under which a refused form of one invoice is shown again: the
// form's name and the invoice's ID, so that only that invoice's form shows the refusal.
func invoiceForm(name, invoiceID string) string { return name + " " + invoiceID }

// companyInvoice reads the invoice a company page's form names, refusing an invoice of
// another company (or another store, or none) as not found.
func (c *Console) companyInvoice(v *visit, companyID, invoiceID string) (credit.Invoice, error) {
	inv, err := c.svc.Invoices.Get(v.ctx, invoiceID)
	if err == nil && inv.CompanyID != companyID {
		err = credit.Errorf(credit.CodeNotFound, "no such invoice")
	}
	return inv, err
}

// invoiceWrite runs one of the invoice forms: the invoice must be the company's; a refusal
// shows the company's page again with the form (under invoiceForm) and its values.
func (c *Console) invoiceWrite(w http.ResponseWriter, r *http.Request, v *visit, name string, fields []string,
	write func(inv credit.Invoice) (credit.InvoiceResult, error), notice func(credit.Invoice) string) {
	id := r.PathValue("id")
	invoiceID := strings.TrimSpace(r.PostForm.Get("invoice"))
	inv, err := c.companyInvoice(v, id, invoiceID)
	if err == nil {
		var res credit.InvoiceResult
		res, err = write(inv)
		inv = res.Invoice
	}
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		if p.Code == credit.CodeInvoiceNotOpen {
			// A stale page or a second tab: the invoice is settled and no longer listed, so
			// the refusal is the page's, above it.
			c.showCompany(w, r, v, p.Status, failedNotice+sentence(p.Message), nil)
			return
		}
		c.showCompany(w, r, v, p.Status, "", map[string]*form{invoiceForm(name, invoiceID): refusedForm(r.PostForm, p, fields...)})
		return
	}
	c.done(w, r, v, companyPath(id)+"#invoices-title", notice(inv))
}

// recordPromise records the company's promise to pay an invoice by a day, under the member's
// name. Both fields' refusals are shown at once, by the domain's checker.
func (c *Console) recordPromise(w http.ResponseWriter, r *http.Request, v *visit) {
	in := credit.PromiseInput{
		InvoiceID:   strings.TrimSpace(r.PostForm.Get("invoice")),
		PromisedFor: strings.TrimSpace(r.PostForm.Get("promised_for")),
		Note:        optional(r.PostForm, "note"),
	}
	if errs := credit.PromiseErrors(in, c.svc.Now()); len(errs) > 0 {
		// The invoice first: another company's invoice is not found, whatever the fields.
		if _, err := c.companyInvoice(v, r.PathValue("id"), in.InvoiceID); err != nil {
			c.fail(w, r, v, err)
			return
		}
		f, status := v.refusedFields(r.PostForm, errs, "promised_for", "note")
		c.showCompany(w, r, v, status, "", map[string]*form{invoiceForm("promise", in.InvoiceID): f})
		return
	}
	c.invoiceWrite(w, r, v, "promise", []string{"promised_for", "note"}, func(inv credit.Invoice) (credit.InvoiceResult, error) {
		return c.svc.Invoices.RecordPromise(v.ctx, in)
	}, func(inv credit.Invoice) string {
		return "Promise recorded: " + inv.PlatformOrderGID + " to be paid by " + inv.Promise.PromisedFor + "; no reminder until then."
	})
}

// withdrawPromise withdraws an invoice's promise to pay; reminders resume.
func (c *Console) withdrawPromise(w http.ResponseWriter, r *http.Request, v *visit) {
	c.invoiceWrite(w, r, v, "withdraw", nil, func(inv credit.Invoice) (credit.InvoiceResult, error) {
		return c.svc.Invoices.WithdrawPromise(v.ctx, inv.ID)
	}, func(inv credit.Invoice) string {
		return "The promise to pay " + inv.PlatformOrderGID + " is withdrawn."
	})
}

// openDispute opens a dispute on an invoice (or replaces its reason): it gets no reminder
// while the dispute is open.
func (c *Console) openDispute(w http.ResponseWriter, r *http.Request, v *visit) {
	c.invoiceWrite(w, r, v, "dispute", []string{"reason"}, func(inv credit.Invoice) (credit.InvoiceResult, error) {
		return c.svc.Invoices.OpenDispute(v.ctx, credit.DisputeInput{InvoiceID: inv.ID, Reason: r.PostForm.Get("reason")})
	}, func(inv credit.Invoice) string {
		return inv.PlatformOrderGID + " is disputed: it gets no reminder until the dispute is resolved."
	})
}

// resolveDispute resolves an invoice's dispute; reminders resume.
func (c *Console) resolveDispute(w http.ResponseWriter, r *http.Request, v *visit) {
	c.invoiceWrite(w, r, v, "resolve", nil, func(inv credit.Invoice) (credit.InvoiceResult, error) {
		return c.svc.Invoices.ResolveDispute(v.ctx, inv.ID)
	}, func(inv credit.Invoice) string {
		return "The dispute on " + inv.PlatformOrderGID + " is resolved; reminders resume."
	})
}

// statementPeriod is the period the statement picker offers by default: the last full
// calendar month (UTC), the period a credit manager sends a statement for.
func statementPeriod(now time.Time) (from, to string) {
	first := time.Date(now.UTC().Year(), now.UTC().Month(), 1, 0, 0, 0, 0, time.UTC)
	return first.AddDate(0, -1, 0).Format(time.DateOnly), first.AddDate(0, 0, -1).Format(time.DateOnly)
}

// statement downloads the company's statement of account for a period as a PDF, the one the
// API gives with Accept: application/pdf. A refused period shows the company's page with the
// picker's refusal beside its field and the dates as typed.
func (c *Console) statement(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	from, to := strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	// Both dates' refusals at once, beside their fields; the domain checks them again. The
	// company first: another store's is not found, whatever the period.
	if errs := credit.StatementPeriodErrors(from, to, c.svc.Now()); len(errs) > 0 {
		if _, err := c.svc.Companies.Get(v.ctx, r.PathValue("id")); err != nil {
			c.fail(w, r, v, err)
			return
		}
		f, status := v.refusedFields(q, errs, "from", "to")
		c.showCompany(w, r, v, status, "", map[string]*form{"statement": f})
		return
	}
	s, err := c.svc.Reports.Statement(v.ctx, r.PathValue("id"), from, to)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showCompany(w, r, v, p.Status, "", map[string]*form{"statement": refusedForm(q, p, "from", "to")})
		return
	}
	var buf bytes.Buffer
	if err := statementpdf.Write(&buf, s); err != nil {
		c.fail(w, r, v, err)
		return
	}
	w.Header().Set("Content-Type", statementpdf.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.Header().Set("Content-Disposition", `attachment; filename="statement-`+s.Company.ID+`-`+s.From+`-`+s.To+`.pdf"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}
