package console

import (
	"net/http"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The platform page: the staff member's store's connection to its shop on the commerce
// platform (contract §13), its secret rotated with the new secret the merchant copies from
// the platform (the platform makes it, not creditd), and the inbox of the platform's
// deliveries by status, a failed one applied again once its cause is fixed. Every action is
// one of package credit's platform operations, which the command line's `platform` commands
// call too.

// inboxPerPage is how many deliveries a page of the inbox lists.
const inboxPerPage = 25

// platformBody is the platform page.
type platformBody struct {
	// Connection is nil when the store is not connected; ConnectHint then says how to.
	Connection  *credit.PlatformConnection
	ConnectHint string
	Graces      []grace
	DefaultPick string
	Rotate      *form
	// Status filters the inbox ("" is every status); Statuses are the filter's choices.
	Status   string
	Statuses []string
	Cursor   string
	Inbox    credit.Page[credit.InboxDelivery]
	// Next is the query string of the inbox's next page, "" on the last.
	Next  string
	Error string
}

// graceChoice is the value of the rotation graces' choice that lasts d.
func graceChoice(d time.Duration) string {
	for _, g := range rotationGraces {
		if parsed, err := time.ParseDuration(g.Value); err == nil && parsed == d {
			return g.Value
		}
	}
	return ""
}

// platform shows the connection and the inbox.
func (c *Console) platform(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showPlatform(w, r, v, http.StatusOK, c.takeNotice(r, v), nil)
}

func (c *Console) showPlatform(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, rotate *form) {
	q := r.URL.Query()
	body := platformBody{Graces: rotationGraces, DefaultPick: graceChoice(credit.DefaultPlatformSecretGrace), Rotate: rotate,
		Status: q.Get("status"), Statuses: credit.InboxStatuses, Cursor: q.Get("cursor")}
	conn, err := c.svc.Platform.Status(v.ctx)
	switch {
	case err == nil:
		body.Connection = &conn
	case credit.CodeOf(err) == credit.CodeNotFound:
		body.ConnectHint = c.hint("printf '%s\\n' 'THE-APP-SECRET' | ", "platform connect", "--store "+v.store.ID+" --shop-domain SHOP.example.com --secret-stdin")
	default:
		c.fail(w, r, v, err)
		return
	}
	limit := inboxPerPage
	body.Inbox, err = c.svc.Inbox.List(v.ctx, credit.InboxListParams{Status: body.Status, ListParams: credit.ListParams{Limit: &limit, Cursor: body.Cursor}})
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		if status == http.StatusOK {
			status = p.Status
		}
		body.Error = sentence(p.Message)
	}
	if body.Inbox.NextCursor != nil {
		body.Next = buildQuery("status", body.Status, "cursor", *body.Inbox.NextCursor)
	}
	p := pageFor(v, "Platform", "platform")
	p.Notice = notice
	p.Body = body
	c.render(w, r, status, "platform.html", p)
}

// rotatePlatformSecret replaces the store's platform secret with the one the merchant pasted
// from the platform; the old one is still accepted for the grace chosen. The secret is never
// shown again, not even in a refused form.
func (c *Console) rotatePlatformSecret(w http.ResponseWriter, r *http.Request, v *visit) {
	// Every field's refusal at once, beside its field; the domain checks them again.
	grace, graceErr := graceOf(r)
	errs := credit.PlatformSecretErrors(r.PostForm.Get("secret"), grace)
	if graceErr != nil {
		errs = withFieldError(errs, graceErr)
	}
	if len(errs) > 0 {
		values := r.PostForm
		values.Del("secret")
		f, status := v.refusedFields(values, errs, "secret", "grace")
		c.showPlatform(w, r, v, status, "", f)
		return
	}
	conn, err := c.svc.Platform.RotateSecret(v.ctx, r.PostForm.Get("secret"), grace)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		values := r.PostForm
		values.Del("secret")
		c.showPlatform(w, r, v, p.Status, "", refusedForm(values, p, "secret", "grace"))
		return
	}
	msg := "The platform secret of shop " + conn.ShopDomain + " is replaced; the previous one is no longer accepted."
	if conn.PreviousSecretExpiresAt != nil {
		msg = "The platform secret of shop " + conn.ShopDomain + " is replaced; the previous one is still accepted until " + formatTime(*conn.PreviousSecretExpiresAt) + "."
	}
	c.done(w, r, v, "/platform", msg)
}

// platformForm takes the platform page's forms at the page's own address, by the form's name,
// so that a refused form shown again leaves the browser on the platform page.
func (c *Console) platformForm(w http.ResponseWriter, r *http.Request, v *visit) {
	switch r.PostForm.Get("form") {
	case "rotate":
		c.rotatePlatformSecret(w, r, v)
	default:
		c.problem(w, r, v, http.StatusBadRequest, "This form is not one of the platform page's.")
	}
}

// retryPlatformDelivery applies a failed delivery again and returns to the inbox as it was
// filtered, saying what the delivery came to.
func (c *Console) retryPlatformDelivery(w http.ResponseWriter, r *http.Request, v *visit) {
	d, err := c.svc.Inbox.Retry(v.ctx, r.PathValue("id"))
	back := retryBack(r)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code != credit.CodeValidationFailed {
			c.fail(w, r, v, err)
			return
		}
		// Not failed (any more): a second click, or another member's retry, came first.
		c.done(w, r, v, back, sentence(p.Message))
		return
	}
	msg := "Delivery " + d.ID + " is " + d.Status
	if d.Reason != nil {
		msg += ": " + strings.ToLower(humanLabel(*d.Reason))
	}
	c.done(w, r, v, back, msg+".")
}
