package console

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/httpapi"
)

// grace is a choice of the rotation form.
type grace struct{ Value, Label string }

// rotationGraces are the graces a rotation offers: how long the old secret keeps working
// beside the new one.
var rotationGraces = []grace{
	{"0s", "No grace: the old secret stops now"},
	{"1h", "1 hour"},
	{"24h", "24 hours (default)"},
	{"168h", "7 days"},
}

// apiSettingsBody is the API settings page.
type apiSettingsBody struct {
	Keys        []credit.KeyInfo
	Scopes      []string
	Graces      []grace
	Create      *form
	Rotate      map[string]*form
	StaleCount  int
	StaleAfter  string
	DefaultPick string
}

// apiSettings lists the store's API keys with their scopes, creation and last use, prompts
// for the cleanup of keys unused for 90 days, and offers to create, rotate and revoke keys.
func (c *Console) apiSettings(w http.ResponseWriter, r *http.Request, v *visit) {
	c.showAPISettings(w, r, v, http.StatusOK, c.takeNotice(r, v), nil, nil)
}

func (c *Console) showAPISettings(w http.ResponseWriter, r *http.Request, v *visit, status int, notice string, create *form, rotate map[string]*form) {
	keys, err := c.svc.Keys.List(v.ctx, credit.DefaultStaleAfter)
	if err != nil {
		c.fail(w, r, v, err)
		return
	}
	body := apiSettingsBody{Keys: keys, Scopes: credit.AllScopes, Graces: rotationGraces, Create: create, Rotate: rotate, StaleAfter: "90 days", DefaultPick: "24h"}
	for _, k := range keys {
		if k.CleanupSuggested {
			body.StaleCount++
		}
	}
	p := pageFor(v, "API settings", "settings")
	p.Notice = notice
	p.Body = body
	c.render(w, r, status, "settings.html", p)
}

// secretBody is the page that shows a new secret, once.
type secretBody struct {
	KeyID  string
	Label  string
	Secret string
	// Rotated is true after a rotation; GraceEnds is when the old secret stops.
	Rotated   bool
	Grace     string
	GraceEnds credit.Timestamp
}

// createKey creates a key and shows its secret at once, in the answer to the form: the
// secret is never stored, so it cannot wait on the session for a redirect like other results.
func (c *Console) createKey(w http.ResponseWriter, r *http.Request, v *visit) {
	label, scopes := r.PostForm.Get("label"), r.PostForm["scopes"]
	// Every field's refusal at once, beside its field; the domain checks them again.
	if errs := credit.KeyErrors(label, scopes); len(errs) > 0 {
		f, status := v.refusedFields(r.PostForm, errs, "label", "scopes")
		c.showAPISettings(w, r, v, status, "", f, nil)
		return
	}
	k, err := c.svc.Keys.Create(v.ctx, label, scopes)
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showAPISettings(w, r, v, p.Status, "", refusedForm(r.PostForm, p, "label", "scopes"), nil)
		return
	}
	p := pageFor(v, "New API key", "settings")
	p.Body = secretBody{KeyID: k.ID, Label: strings.TrimSpace(label), Secret: k.Secret}
	c.render(w, r, http.StatusOK, "secret.html", p)
}

// graceOf reads a rotation form's grace: how long the old secret keeps working.
//
// Errors: validation_failed (param "grace").
func graceOf(r *http.Request) (time.Duration, error) {
	grace, err := time.ParseDuration(r.PostForm.Get("grace"))
	if err != nil {
		return 0, credit.ParamErrorf(credit.CodeValidationFailed, "grace", "grace must be a duration such as 24h")
	}
	return grace, nil
}

// rotateKey issues a new secret for the key of the form's address and shows it once.
func (c *Console) rotateKey(w http.ResponseWriter, r *http.Request, v *visit) {
	c.rotateKeyOf(w, r, v, r.PathValue("id"))
}

// rotateKeyOf issues a new secret for a key and shows it once, with the moment the old secret
// stops working.
func (c *Console) rotateKeyOf(w http.ResponseWriter, r *http.Request, v *visit, id string) {
	grace, err := graceOf(r)
	var k credit.IssuedKey
	if err == nil {
		k, err = c.svc.Keys.Rotate(v.ctx, id, grace)
	}
	if err != nil {
		p := httpapi.Describe(err)
		if p.Code == credit.CodeNotFound || p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		c.showAPISettings(w, r, v, p.Status, "", nil, map[string]*form{id: refusedForm(r.PostForm, p, "grace")})
		return
	}
	p := pageFor(v, "Rotated API key", "settings")
	p.Body = secretBody{KeyID: k.ID, Secret: k.Secret, Rotated: true, Grace: grace.String(), GraceEnds: k.OldSecretsEnd}
	c.render(w, r, http.StatusOK, "secret.html", p)
}

// revokeKey revokes a key: every secret of it stops at once, on every instance.
func (c *Console) revokeKey(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if err := c.svc.Keys.Revoke(v.ctx, id); err != nil {
		c.fail(w, r, v, err)
		return
	}
	c.done(w, r, v, "/settings/api", "Key "+id+" is revoked: its secrets no longer work.")
}

// settingsForm takes the API settings page's forms at the page's own address, by the form's
// name (the rotation's key in the form), so that a refused form shown again leaves the
// browser on the settings page.
func (c *Console) settingsForm(w http.ResponseWriter, r *http.Request, v *visit) {
	switch r.PostForm.Get("form") {
	case "create":
		c.createKey(w, r, v)
	case "rotate":
		c.rotateKeyOf(w, r, v, r.PostForm.Get("key"))
	default:
		c.problem(w, r, v, http.StatusBadRequest, "This form is not one of the API settings page's.")
	}
}

// privacyBody is the person erasure page.
type privacyBody struct {
	Erase *form
}

// privacy offers a person's erasure.
func (c *Console) privacy(w http.ResponseWriter, r *http.Request, v *visit) {
	p := pageFor(v, "Privacy", "privacy")
	p.Notice = c.takeNotice(r, v)
	p.Body = privacyBody{}
	c.render(w, r, http.StatusOK, "privacy.html", p)
}

// erasePerson carries out a data-protection erasure of a person's contact data from the store's
// applications. The notice does not repeat the email: it waits on the session until shown.
func (c *Console) erasePerson(w http.ResponseWriter, r *http.Request, v *visit) {
	// Every field's refusal at once, beside its field; the domain checks the email again.
	if errs := credit.ErasureErrors(r.PostForm.Get("email"), r.PostForm.Get("confirm") == "yes"); len(errs) > 0 {
		f, status := v.refusedFields(r.PostForm, errs, "email", "confirm")
		page := pageFor(v, "Privacy", "privacy")
		page.Body = privacyBody{Erase: f}
		c.render(w, r, status, "privacy.html", page)
		return
	}
	n, err := c.svc.Applications.ErasePerson(v.ctx, r.PostForm.Get("email"))
	if err != nil {
		p := httpapi.Describe(err)
		if p.Status >= 500 {
			c.fail(w, r, v, err)
			return
		}
		page := pageFor(v, "Privacy", "privacy")
		page.Body = privacyBody{Erase: refusedForm(r.PostForm, p, "email", "confirm")}
		c.render(w, r, p.Status, "privacy.html", page)
		return
	}
	msg := "No application had that email; nothing was changed."
	switch {
	case n == 1:
		msg = "1 application had that email: its contact name and email are erased."
	case n > 1:
		msg = strconv.Itoa(n) + " applications had that email: their contact names and emails are erased."
	}
	c.done(w, r, v, "/privacy", msg)
}
