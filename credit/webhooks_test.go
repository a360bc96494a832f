package credit_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ids"
)

// Webhook endpoints, as staff manage them: their URL (public HTTPS unless private destinations
// are allowed), their event filter, their signing secret's rotation with a grace, enabling,
// disabling and deleting them.

// TestWebhookEndpointURL: an endpoint's URL is https://host[:port]/path to a public address,
// without credentials or fragment; loopback, private, link-local and localhost are refused in
// any spelling, unless the service allows private webhooks, which also allows http://.
func TestWebhookEndpointURL(t *testing.T) {
	t.Parallel()
	const (
		accepted = ""
		private  = "not a public internet address"
		httpOnly = "only HTTPS is allowed (an operator can allow http://"
		form     = "the URL must be"
		blank    = "url must not be empty"
		long     = "url must be at most 2048 characters"
	)
	type urlEnv struct {
		*ruleEnv
		allow bool
	}
	envs := []urlEnv{{newRuleEnv(t, "EUR", sealingOptions(t, false)), false}, {newRuleEnv(t, "EUR", sealingOptions(t, true)), true}}
	for _, tc := range []struct {
		url                 string
		public, withPrivate string // the refusal's words, or accepted
	}{
		{"https://hooks.example.com/creditd", accepted, accepted},
		{"https://hooks.example.com:8443/x?y=1", accepted, accepted},
		{"https://8.8.8.8/hook", accepted, accepted},
		{"https://[2606:4700:4700::1111]/hook", accepted, accepted},
		{"https://bücher.example/hook", accepted, accepted},
		{"  https://hooks.example.com/padded  ", accepted, accepted},
		{"http://hooks.example.com/x", httpOnly, accepted},
		{"http://127.0.0.1:8080/hook", httpOnly, accepted},
		{"https://localhost/x", private, accepted},
		{"https://api.localhost/x", private, accepted},
		{"https://LOCALHOST./x", private, accepted},
		{"https://127.0.0.1/x", private, accepted},
		{"https://10.1.2.3/x", private, accepted},
		{"https://172.16.0.1/x", private, accepted},
		{"https://192.168.1.10/x", private, accepted},
		{"https://169.254.169.254/latest/meta-data", private, accepted},
		{"https://[::1]/x", private, accepted},
		{"https://[fe80::1]/x", private, accepted},
		{"https://0x7f000001/x", private, accepted},
		{"https://2130706433/x", private, accepted},
		{"https://127.1/x", private, accepted},
		{"https://0.0.0.0/x", private, accepted},
		{"https://100.64.0.1/x", private, accepted},
		{"https://203.0.113.7/x", private, accepted},
		{"https://[2001:db8::1]/x", private, accepted},
		{"https://[::ffff:10.0.0.1]/x", private, accepted},
		{"https://[64:ff9b::a00:1]/x", private, accepted},
		{"https://user:secret@hooks.example.com/x", form, form},
		{"https://hooks.example.com/x#section", form, form},
		{"ftp://hooks.example.com/x", form, form},
		{"https://hooks.example.com:0/x", form, form},
		{"https://hooks.example.com:65536/x", form, form},
		{"hooks.example.com/x", form, form},
		{"https:///x", form, form},
		{"https://999.1.1.1/x", form, form},
		{"", blank, blank},
		{"https://hooks.example.com/" + strings.Repeat("p", 2049), long, long},
	} {
		for _, env := range envs {
			want := tc.public
			if env.allow {
				want = tc.withPrivate
			}
			before, err := env.Service.Webhooks.ListEndpoints(env.staff)
			if err != nil {
				t.Fatal(err)
			}
			issued, err := env.Service.Webhooks.CreateEndpoint(env.staff, credit.WebhookEndpointInput{URL: tc.url})
			after, lerr := env.Service.Webhooks.ListEndpoints(env.staff)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if want != accepted {
				wantError(t, tc.url, err, credit.CodeValidationFailed, "url")
				if err != nil && !strings.Contains(err.Error(), want) {
					t.Errorf("%q (private allowed: %v): %q does not say %q", tc.url, env.allow, err, want)
				}
				if len(after) != len(before) {
					t.Errorf("%q: a refused endpoint was created", tc.url)
				}
				continue
			}
			if err != nil || len(after) != len(before)+1 {
				t.Errorf("%q (private allowed: %v): %+v %v", tc.url, env.allow, issued, err)
				continue
			}
			if e := after[len(after)-1]; e.ID != issued.ID || e.URL != strings.TrimSpace(tc.url) || e.Status != "enabled" {
				t.Errorf("%q (private allowed: %v): endpoint %+v", tc.url, env.allow, e)
			}
			env.Clock.Advance(time.Second) // endpoints are listed by creation time
		}
	}
}

// TestWebhookEndpointInput: the description has at most 500 characters, the event filter
// names known types (each once; none means every type), staff alone create endpoints, and
// without a master key there are no webhooks.
func TestWebhookEndpointInput(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR", sealingOptions(t, false))
	url := "https://hooks.example.com/x"
	for _, tc := range []struct {
		name        string
		description string
		events      []string
		param       string   // "" for accepted
		want        []string // the accepted endpoint's event types
	}{
		{"every type", "", nil, "", []string{}},
		{"a description of 500 characters", strings.Repeat("d", 500), nil, "", []string{}},
		{"two types, one twice", "", []string{string(credit.EventTypeCompanyHoldPlaced), string(credit.EventTypeLedgerEntryCreated), string(credit.EventTypeCompanyHoldPlaced)}, "", []string{string(credit.EventTypeCompanyHoldPlaced), string(credit.EventTypeLedgerEntryCreated)}},
		{"a description of 501 characters", strings.Repeat("d", 501), nil, "description", nil},
		{"a blank description", "  ", nil, "description", nil},
		{"an unknown type", "", []string{string(credit.EventTypeCompanyCreated), "company.deleted"}, "events", nil},
		{"a timeline event's type", "", []string{string(credit.TimelineHoldPlaced)}, "events", nil},
	} {
		before, _ := env.Service.Webhooks.ListEndpoints(env.staff)
		issued, err := env.Service.Webhooks.CreateEndpoint(env.staff, credit.WebhookEndpointInput{URL: url, Description: tc.description, EventTypes: tc.events})
		after, _ := env.Service.Webhooks.ListEndpoints(env.staff)
		if tc.param != "" {
			wantError(t, tc.name, err, credit.CodeValidationFailed, tc.param)
			if len(after) != len(before) {
				t.Errorf("%s: a refused endpoint was created", tc.name)
			}
			continue
		}
		if err != nil || !strings.HasPrefix(issued.ID, "we_") || !strings.HasPrefix(issued.Secret, "whsec_") {
			t.Errorf("%s: %+v %v", tc.name, issued, err)
			continue
		}
		i := slices.IndexFunc(after, func(e credit.WebhookEndpoint) bool { return e.ID == issued.ID })
		if i < 0 || len(after) != len(before)+1 {
			t.Fatalf("%s: endpoints %+v", tc.name, after)
		}
		if e := after[i]; !slices.Equal(e.EventTypes, tc.want) || e.Description != tc.description || e.StoreID != env.store ||
			e.PreviousSecretExpiresAt != nil || e.DisabledAt != nil || !e.CreatedAt.Equal(env.Clock.Now()) {
			t.Errorf("%s: endpoint %+v, want types %v", tc.name, after[i], tc.want)
		}
	}
	_, err := env.Service.Webhooks.CreateEndpoint(apiKey(env.store, credit.AllScopes...), credit.WebhookEndpointInput{URL: url})
	wantError(t, "an API key", err, credit.CodeInsufficientScope, "")

	keyless := newRuleEnv(t, "EUR")
	if _, err := keyless.Service.Webhooks.CreateEndpoint(keyless.staff, credit.WebhookEndpointInput{URL: url}); !errors.Is(err, credit.ErrNoWebhookKey) {
		t.Errorf("without a master key: %v, want ErrNoWebhookKey", err)
	}
}

// TestWebhookSecretRotation: a rotation's new secret signs at once; the replaced one signs
// beside it until its grace ends (not at its end); a rotation during a grace drops the secret
// replaced before; with no grace the replaced secret stops at once; a negative grace is refused
// and changes nothing.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR", sealingOptions(t, false))
	issued, err := env.Service.Webhooks.CreateEndpoint(env.staff, credit.WebhookEndpointInput{URL: "https://hooks.example.com/x"})
	if err != nil {
		t.Fatal(err)
	}
	signing := func(what string, want ...string) {
		t.Helper()
		due, err := env.Service.Webhooks.Ping(env.staff, issued.ID)
		if err != nil || !slices.Equal(due.Secrets, want) {
			t.Errorf("%s: signing with %d secrets %v (%v), want %d", what, len(due.Secrets), due.Secrets, err, len(want))
		}
	}
	previousEnds := func(what string, want *time.Time) {
		t.Helper()
		list, err := env.Service.Webhooks.ListEndpoints(env.staff)
		if err != nil || len(list) != 1 {
			t.Fatalf("endpoints %+v %v", list, err)
		}
		got := list[0].PreviousSecretExpiresAt
		if (got == nil) != (want == nil) || (got != nil && !got.Equal(*want)) {
			t.Errorf("%s: previous secret ends %v, want %v", what, got, want)
		}
	}
	signing("created", issued.Secret)

	_, err = env.Service.Webhooks.RotateSecret(env.staff, issued.ID, -time.Second)
	wantError(t, "a negative grace", err, credit.CodeValidationFailed, "grace")
	signing("after a refused rotation", issued.Secret)
	previousEnds("after a refused rotation", nil)

	t0 := env.Clock.Now()
	s1, err := env.Service.Webhooks.RotateSecret(env.staff, issued.ID, time.Hour)
	if err != nil || s1.ID != issued.ID || s1.Secret == issued.Secret || !strings.HasPrefix(s1.Secret, "whsec_") {
		t.Fatalf("rotate: %+v %v", s1, err)
	}
	ends := t0.Add(time.Hour)
	if !s1.OldSecretEnds.Equal(ends) {
		t.Errorf("the old secret ends at %v, want %v", s1.OldSecretEnds, ends)
	}
	signing("during the grace", s1.Secret, issued.Secret)
	previousEnds("during the grace", &ends)
	env.Clock.Set(ends.Add(-time.Microsecond))
	signing("a microsecond before the grace ends", s1.Secret, issued.Secret)
	env.Clock.Set(ends)
	signing("when the grace ends", s1.Secret)
	previousEnds("when the grace has ended, still shown", &ends)

	s2, err := env.Service.Webhooks.RotateSecret(env.staff, issued.ID, credit.DefaultWebhookSecretGrace)
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(time.Minute)
	s3, err := env.Service.Webhooks.RotateSecret(env.staff, issued.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	signing("a rotation during a grace", s3.Secret, s2.Secret)
	if _, err := env.Service.Webhooks.RotateSecret(env.staff, issued.ID, 0); err != nil {
		t.Fatal(err)
	}
	previousEnds("rotated without a grace", nil)
	for _, s := range []string{issued.Secret, s1.Secret, s2.Secret, s3.Secret} {
		due, _ := env.Service.Webhooks.Ping(env.staff, issued.ID)
		if due != nil && slices.Contains(due.Secrets, s) {
			t.Errorf("a secret replaced without a grace still signs")
		}
	}
}

// TestWebhookEndpointEnableDisableDelete: disabling records who and when (and disabling again
// changes nothing), the worker then has nothing for it; enabling clears it; a deleted endpoint
// is not found by any operation.
func TestWebhookEndpointEnableDisableDelete(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR", sealingOptions(t, false))
	issued, err := env.Service.Webhooks.CreateEndpoint(env.staff, credit.WebhookEndpointInput{URL: "https://hooks.example.com/x"})
	if err != nil {
		t.Fatal(err)
	}
	env.MustCompany(t, env.store, "Buyer", "100") // an event for the endpoint
	due := func() []string {
		t.Helper()
		targets, err := env.Service.WebhookQueue.DueWebhookEndpoints(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range targets {
			out = append(out, x.ID)
		}
		return out
	}
	if got := due(); !slices.Equal(got, []string{issued.ID}) {
		t.Fatalf("due endpoints %v", got)
	}
	env.Clock.Advance(time.Minute)
	disabledAt := env.Clock.Now()
	e, err := env.Service.Webhooks.SetEndpointEnabled(env.staff, issued.ID, false)
	if err != nil || e.Status != "disabled" || e.DisabledReason == nil || *e.DisabledReason != "disabled by test staff" || e.DisabledAt == nil || !e.DisabledAt.Equal(disabledAt) {
		t.Fatalf("disable: %+v %v", e, err)
	}
	env.Clock.Advance(time.Minute)
	if again, err := env.Service.Webhooks.SetEndpointEnabled(env.staff, issued.ID, false); err != nil || asJSON(again) != asJSON(e) {
		t.Errorf("disabling again: %+v %v, want it unchanged %+v", again, err, e)
	}
	if got := due(); len(got) != 0 {
		t.Errorf("due endpoints while disabled: %v", got)
	}
	if next, err := env.Service.WebhookQueue.NextWebhookDeliveries(credit.WebhookViewer(t.Context(), env.store), issued.ID, 10); err != nil || len(next) != 0 {
		t.Errorf("deliveries of a disabled endpoint: %d %v", len(next), err)
	}
	e, err = env.Service.Webhooks.SetEndpointEnabled(env.staff, issued.ID, true)
	if err != nil || e.Status != "enabled" || e.DisabledReason != nil || e.DisabledAt != nil || e.FailingSince != nil {
		t.Fatalf("enable: %+v %v", e, err)
	}
	if got := due(); !slices.Equal(got, []string{issued.ID}) {
		t.Errorf("due endpoints once enabled again: %v", got)
	}

	if err := env.Service.Webhooks.DeleteEndpoint(env.staff, issued.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := env.Service.Webhooks.ListEndpoints(env.staff); err != nil || len(list) != 0 {
		t.Errorf("endpoints after the deletion: %+v %v", list, err)
	}
	events := env.feed(t)
	for name, id := range map[string]string{"the deleted endpoint": issued.ID, "an unknown endpoint": ids.New("we"), "an event's ID": events[0].ID, "empty": ""} {
		wantError(t, "deleting "+name, env.Service.Webhooks.DeleteEndpoint(env.staff, id), credit.CodeNotFound, "")
		_, err := env.Service.Webhooks.SetEndpointEnabled(env.staff, id, true)
		wantError(t, "enabling "+name, err, credit.CodeNotFound, "")
		_, err = env.Service.Webhooks.RotateSecret(env.staff, id, time.Hour)
		wantError(t, "rotating "+name, err, credit.CodeNotFound, "")
		_, err = env.Service.Webhooks.Deliveries(env.staff, id, 10)
		wantError(t, "the deliveries of "+name, err, credit.CodeNotFound, "")
		_, err = env.Service.Webhooks.Ping(env.staff, id)
		wantError(t, "pinging "+name, err, credit.CodeNotFound, "")
		_, err = env.Service.Webhooks.Redeliver(env.staff, events[0].ID, id)
		wantError(t, "redelivering to "+name, err, credit.CodeNotFound, "")
	}
	for _, limit := range []int{0, 1001} {
		_, err := env.Service.Webhooks.Deliveries(env.staff, ids.New("we"), limit)
		wantError(t, "deliveries with a limit out of range", err, credit.CodeValidationFailed, "limit")
	}
	// Only staff manage endpoints.
	key := apiKey(env.store, credit.AllScopes...)
	_, err = env.Service.Webhooks.SetEndpointEnabled(key, issued.ID, false)
	wantError(t, "an API key disabling", err, credit.CodeInsufficientScope, "")
	_, err = env.Service.Webhooks.RotateSecret(key, issued.ID, time.Hour)
	wantError(t, "an API key rotating", err, credit.CodeInsufficientScope, "")
	wantError(t, "an API key deleting", env.Service.Webhooks.DeleteEndpoint(key, issued.ID), credit.CodeInsufficientScope, "")
}
