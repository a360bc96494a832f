package console

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// The webhooks page: the staff member's store's endpoints (beside its API keys, where the
// specification puts the store's integrations), created with their secret shown once,
// enabled and disabled, their secret rotated, their deliveries and attempts read and an event
// redelivered. Every action is one of package credit's webhook operations, which the command
// line's `webhook` commands call too.

// webhookAttemptsShown is how many of an endpoint's latest attempts its page lists.
const webhookAttemptsShown = 50

// webhooksBody is the list of endpoints.
type webhooksBody struct {
	Endpoints  []credit.WebhookEndpoint
	EventTypes []string
	Graces     []grace
	Create     *form
	Rotate     map[string]*form
}

// webhooks lists the store's endpoints with the forms that act on them.
func (c *Console) webhooks(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showWebhooks(w, r, v, http.StatusOK, c.takeNotice(r, v), nil, nil)
}

func (c *Console) showWebhooks(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, create *form, rotate map[string]*form) {
	endpoints, err := c.svc.Webhooks.ListEndpoints(v.ctx)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	p := pageFor(v, "Webhooks", "webhooks")
	p.Notice = notice
	p.Body = webhooksBody{Endpoints: endpoints, EventTypes: credit.EventTypeNames(), Graces: rotationGraces, Create: create, Rotate: rotate}
	c.render(w, r, status, "webhooks.html", p)
}

// webhookPath is an endpoint's page.
func webhookPath(id string) string { return "/webhooks/" + url.PathEscape(id) }

// webhookSecretBody is the page that shows an endpoint's new signing secret, once.
type webhookSecretBody struct {
	EndpointID  string
	Description string
	Secret      string
	Rotated     bool
	Grace       string
	GraceEnds   credit.Timestamp
}

// createWebhook creates an endpoint and shows its signing secret in the answer: the secret is
// stored only sealed, and a session must not carry it across a redirect.
func (c *Console) createWebhook(w http.ResponseWriter, r *http.Request, v *visit) {
	in := credit.WebhookEndpointInput{
		URL:         strings.TrimSpace(r.PostForm.Get("url")),
		Description: strings.TrimSpace(r.PostForm.Get("description")),
		EventTypes:  r.PostForm["events"],
	}
	// Every field's refusal at once, beside its field; the domain checks them again.
	if errs := c.svc.Webhooks.EndpointErrors(in); len(errs) > 0 {
		f, status := v.refusedFields(r.PostForm, errs, "url", "description", "events")
		c.showWebhooks(w, r, v, status, "", f, nil)
		return
	}
	issued, err := c.svc.Webhooks.CreateEndpoint(v.ctx, in)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showWebhooks(w, r, v, p.Status, "", refusedForm(r.PostForm, p, "url", "description", "events"), nil)
		return
	}
	p := pageFor(v, "New webhook endpoint", "webhooks")
	p.Body = webhookSecretBody{EndpointID: issued.ID, Description: in.Description, Secret: issued.Secret}
	c.render(w, r, http.StatusOK, "webhook_secret.html", p)
}

// setWebhookEnabled enables or disables an endpoint.
func (c *Console) setWebhookEnabled(enabled bool) func(w http.ResponseWriter, r *http.Request, v *visit) {
	return func(w http.ResponseWriter, r *http.Request, v *visit) {
		e, err := c.svc.Webhooks.SetEndpointEnabled(v.ctx, r.PathValue("id"), enabled)
		if err != nil {
			c.fail(w, r, v, err)
			return
		}
		msg := "Endpoint " + e.ID + " is disabled: it is sent nothing until enabled again."
		if enabled {
			msg = "Endpoint " + e.ID + " is enabled: it resumes where it stopped."
		}
		c.done(w, r, v, "/webhooks", msg)
	}
}

// webhooksForm takes the webhooks page's forms at the page's own address, by the form's name
// (a rotation's endpoint in the form; no name is the endpoint's creation, the address's first
// form), so that a refused form shown again leaves the browser on the webhooks page.
func (c *Console) webhooksForm(w http.ResponseWriter, r *http.Request, v *visit) {
	switch r.PostForm.Get("form") {
	case "", "create":
		c.createWebhook(w, r, v)
	case "rotate":
		c.rotateWebhookOf(w, r, v, r.PostForm.Get("endpoint"))
	default:
		c.problem(w, r, v, http.StatusBadRequest, "This form is not one of the webhooks page's.")
	}
}

// rotateWebhook gives the endpoint of the form's address a new secret and shows it once.
func (c *Console) rotateWebhook(w http.ResponseWriter, r *http.Request, v *visit) {
	c.rotateWebhookOf(w, r, v, r.PathValue("id"))
}

// rotateWebhookOf gives an endpoint a new secret and shows it once, with the moment the old
// one stops signing.
func (c *Console) rotateWebhookOf(w http.ResponseWriter, r *http.Request, v *visit, id string) {
	grace, err := graceOf(r)
	var issued credit.IssuedWebhookSecret
	if err == nil {
		issued, err = c.svc.Webhooks.RotateSecret(v.ctx, id, grace)
	}
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showWebhooks(w, r, v, p.Status, "", nil, map[string]*form{id: refusedForm(r.PostForm, p, "grace")})
		return
	}
	p := pageFor(v, "Rotated webhook secret", "webhooks")
	p.Body = webhookSecretBody{EndpointID: issued.ID, Secret: issued.Secret, Rotated: true, Grace: grace.String(), GraceEnds: issued.OldSecretEnds}
	c.render(w, r, http.StatusOK, "webhook_secret.html", p)
}

// webhookBody is an endpoint's page: its deliveries waiting and its latest attempts.
type webhookBody struct {
	Report    credit.WebhookDeliveryReport
	Redeliver *form
	// Recent are the events of the endpoint's latest attempts, newest first, to pick for a
	// redelivery.
	Recent []string
	// CanTest shows the "Send a test event" button: the console can make a delivery now.
	CanTest bool
}

// webhook shows an endpoint's pending deliveries and latest attempts, and the redelivery form.
func (c *Console) webhook(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showWebhook(w, r, v, http.StatusOK, c.takeNotice(r, v), nil)
}

func (c *Console) showWebhook(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, redeliver *form) {
	report, err := c.svc.Webhooks.Deliveries(v.ctx, r.PathValue("id"), webhookAttemptsShown)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	title := report.Endpoint.Description
	if title == "" {
		title = report.Endpoint.URL
	}
	p := pageFor(v, title, "webhooks")
	p.Notice = notice
	body := webhookBody{Report: report, Redeliver: redeliver, CanTest: c.sendNow != nil}
	for _, a := range report.Attempts {
		if !slices.Contains(body.Recent, a.EventID) && len(body.Recent) < 10 {
			body.Recent = append(body.Recent, a.EventID)
		}
	}
	p.Body = body
	c.render(w, r, status, "webhook.html", p)
}

// redeliverWebhook sends an event to the endpoint again.
func (c *Console) redeliverWebhook(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	// An event picked from the recent ones, or another event's ID typed in.
	event := strings.TrimSpace(r.PostForm.Get("event_other"))
	if event == "" {
		event = strings.TrimSpace(r.PostForm.Get("event"))
	}
	d, err := c.svc.Webhooks.Redeliver(v.ctx, event, id)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		if _, known := c.svc.Webhooks.Deliveries(v.ctx, id, 1); known != nil {
			c.fail(w, r, v, known) // the endpoint itself is unknown here
			return
		}
		// The endpoint is there: the event is what is unknown, or no longer kept. The form
		// shows the ID that was refused in its text field.
		p.Param = "event"
		values := r.PostForm
		values.Set("event_other", event)
		c.showWebhook(w, r, v, p.Status, "", refusedForm(values, p, "event"))
		return
	}
	c.done(w, r, v, webhookPath(id), "Event "+d.EventID+" will be delivered again shortly.")
}

// webhookForm takes an endpoint page's forms at the page's own address, by the form's name, so
// that a refused form shown again leaves the browser on the endpoint's page.
func (c *Console) webhookForm(w http.ResponseWriter, r *http.Request, v *visit) {
	switch r.PostForm.Get("form") {
	case "redeliver":
		c.redeliverWebhook(w, r, v)
	default:
		// Another store's endpoint or an unknown one is not found, whatever the form.
		if _, err := c.svc.Webhooks.Deliveries(v.ctx, r.PathValue("id"), 1); err != nil {
			c.fail(w, r, v, err)
			return
		}
		c.problem(w, r, v, http.StatusBadRequest, "This form is not one of the endpoint page's.")
	}
}

// testWebhook sends the endpoint a signed ping now, as `creditd webhook test` does, and shows
// the attempt's outcome; the attempt is listed with the endpoint's others.
func (c *Console) testWebhook(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if c.sendNow == nil {
		c.fail(w, r, v, credit.Errorf(credit.CodeNotFound, "this console cannot send webhooks"))
		return
	}
	due, err := c.svc.Webhooks.Ping(v.ctx, id)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	rec, err := c.sendNow(v.ctx, due)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	a := rec.Attempt
	notice := "Test event " + a.EventID + " sent: " + humanLabel(a.Outcome)
	if a.StatusCode == nil || *a.StatusCode < 200 || *a.StatusCode > 299 {
		// Not delivered: shown as an alert, not as a success.
		notice = failedNotice + "Test event " + a.EventID + " was not delivered: " + humanLabel(a.Outcome)
	}
	if a.StatusCode != nil {
		notice += fmt.Sprintf(" (HTTP %d)", *a.StatusCode)
	}
	if a.Error != "" {
		notice += ": " + a.Error
	}
	c.done(w, r, v, webhookPath(id), notice+".")
}
