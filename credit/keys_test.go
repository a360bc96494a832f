package credit_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// API keys (contract §2): created by staff with a label and scopes, rotated with a grace for
// the secrets they replace, revoked at once; a secret authenticates as its key, in its store,
// with its scopes, until it is revoked or its grace ends, by the service's clock.

// authenticates fails unless secret authenticates as key in store, with scopes and label.
func authenticates(t *testing.T, env *ruleEnv, what, secret, keyID, label string, scopes []string) {
	t.Helper()
	ctx, err := env.Service.Keys.Authenticate(context.Background(), secret)
	if err != nil {
		t.Errorf("%s: %v, want it to authenticate", what, err)
		return
	}
	v, _ := tenant.FromContext(ctx)
	if v.StoreID != env.store || v.KeyID != keyID || v.Label != label || v.ActorType != tenant.ActorAPIKey || !slices.Equal(v.Scopes, scopes) || v.IsSystem() {
		t.Errorf("%s: viewer %+v, want key %s of %s labelled %q with %v", what, v, keyID, env.store, label, scopes)
	}
}

// refused fails unless secret is refused with the one answer for every unusable key.
func refused(t *testing.T, env *ruleEnv, what, secret string) {
	t.Helper()
	_, err := env.Service.Keys.Authenticate(context.Background(), secret)
	if err == nil || err.Error() != credit.ErrUnauthenticated().Error() {
		t.Errorf("%s: %v, want %v", what, err, credit.ErrUnauthenticated())
	}
	wantError(t, what, err, credit.CodeUnauthenticated, "")
	// A read that trusts the cache is refused too, by Confirm at the latest.
	if ctx, err := env.Service.Keys.AuthenticateRead(context.Background(), secret); err == nil {
		if err := env.Service.Keys.Confirm(ctx); credit.CodeOf(err) != credit.CodeUnauthenticated {
			t.Errorf("%s: a read's confirmation: %v, want unauthenticated", what, err)
		}
	} else if credit.CodeOf(err) != credit.CodeUnauthenticated {
		t.Errorf("%s: a read: %v, want unauthenticated", what, err)
	}
}

// TestCreateKeyChecksItsInput: a key needs a label of 1 to 100 characters and at least one of
// the three scopes, each once; its secret (ck_ and 36 base62 characters) is returned once and
// authenticates as the key; key.created shows neither the secret nor its hash.
func TestCreateKeyChecksItsInput(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	for _, tc := range []struct {
		name   string
		label  string
		scopes []string
		param  string   // "" for accepted
		want   []string // the accepted key's scopes
		shown  string   // and label
	}{
		{"one scope", "ERP sync", []string{credit.ScopeReadCredit}, "", []string{credit.ScopeReadCredit}, "ERP sync"},
		{"every scope", "Full", credit.AllScopes, "", credit.AllScopes, "Full"},
		{"a padded label", "  Dashboard \t", []string{credit.ScopeReadApplications}, "", []string{credit.ScopeReadApplications}, "Dashboard"},
		{"a label of 100 characters", strings.Repeat("ü", 100), []string{credit.ScopeWriteCredit}, "", []string{credit.ScopeWriteCredit}, strings.Repeat("ü", 100)},
		{"a scope twice", "Twice", []string{credit.ScopeWriteCredit, credit.ScopeReadCredit, credit.ScopeWriteCredit}, "", []string{credit.ScopeWriteCredit, credit.ScopeReadCredit}, "Twice"},
		{"no label", "", []string{credit.ScopeReadCredit}, "label", nil, ""},
		{"a blank label", "   ", []string{credit.ScopeReadCredit}, "label", nil, ""},
		{"a label of 101 characters", strings.Repeat("l", 101), []string{credit.ScopeReadCredit}, "label", nil, ""},
		{"a label with a control character", "ERP\x1bsync", []string{credit.ScopeReadCredit}, "label", nil, ""},
		{"no scopes", "k", nil, "scopes", nil, ""},
		{"an empty list of scopes", "k", []string{}, "scopes", nil, ""},
		{"an unknown scope", "k", []string{credit.ScopeReadCredit, "admin"}, "scopes", nil, ""},
		{"a scope in upper case", "k", []string{"READ_CREDIT"}, "scopes", nil, ""},
		{"an empty scope", "k", []string{""}, "scopes", nil, ""},
		{"no label and no scopes", "", nil, "label", nil, ""},
	} {
		events := len(env.feed(t))
		k, err := env.Service.Keys.Create(env.staff, tc.label, tc.scopes)
		if tc.param != "" {
			wantError(t, tc.name, err, credit.CodeValidationFailed, tc.param)
			if n := len(env.feed(t)); n != events {
				t.Errorf("%s: a refused key appended %d events", tc.name, n-events)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !strings.HasPrefix(k.ID, "key_") || !strings.HasPrefix(k.Secret, "ck_") || len(k.Secret) != 39 || strings.Trim(k.Secret[3:], ids.Base62) != "" {
			t.Errorf("%s: issued %+v", tc.name, k)
		}
		authenticates(t, env, tc.name, k.Secret, k.ID, tc.shown, tc.want)
		feed := env.feed(t)[events:]
		if len(feed) != 1 || feed[0].Type != credit.EventTypeKeyCreated || strings.Contains(string(feed[0].Data), k.Secret[3:]) {
			t.Fatalf("%s: events %+v", tc.name, feed)
		}
		var data struct {
			Object credit.KeyEventObject `json:"object"`
		}
		if err := json.Unmarshal(feed[0].Data, &data); err != nil || data.Object.ID != k.ID || data.Object.Label != tc.shown ||
			!slices.Equal(data.Object.Scopes, tc.want) || data.Object.RevokedAt != nil || !data.Object.CreatedAt.Equal(env.Clock.Now()) {
			t.Errorf("%s: key.created's object %+v %v", tc.name, data.Object, err)
		}
	}
	// Only staff create keys; keys do not.
	_, err := env.Service.Keys.Create(apiKey(env.store, credit.AllScopes...), "k", []string{credit.ScopeReadCredit})
	wantError(t, "a key creating a key", err, credit.CodeInsufficientScope, "")
}

// TestAuthenticateRefusesEveryUnusableSecret: a missing, malformed, mistyped or unknown secret
// gets the one same answer, which never says which it was.
func TestAuthenticateRefusesEveryUnusableSecret(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	k := env.MustIssuedKey(t, env.store, "ERP sync", credit.ScopeReadCredit)
	secret := k.Secret
	elsewhere := credittest.NewService(t)
	unknown := elsewhere.MustKey(t, elsewhere.MustStore(t, "Elsewhere", "EUR"), "theirs", credit.ScopeReadCredit)
	last := secret[len(secret)-1]
	other := byte('A')
	if last == other {
		other = 'B'
	}
	for name, s := range map[string]string{
		"empty":                         "",
		"the prefix alone":              "ck_",
		"one character short":           secret[:len(secret)-1],
		"one character more":            secret + "x",
		"a wrong checksum":              secret[:len(secret)-1] + string(other),
		"in upper case":                 strings.ToUpper(secret),
		"with a space":                  " " + secret,
		"with the scheme":               "Bearer " + secret,
		"another prefix":                "sk_" + secret[3:],
		"a well-formed but unknown one": unknown,
		"a character outside of base62": secret[:10] + "-" + secret[11:],
		"zeros":                         secret[:3] + strings.Repeat("0", 36),
	} {
		refused(t, env, name, s)
	}
	authenticates(t, env, "the secret itself", secret, k.ID, "ERP sync", []string{credit.ScopeReadCredit})
}

// TestKeyRotationGrace: a rotation issues a new secret at once and keeps the secrets it
// replaces working for the grace, up to the microsecond before it ends, by the service's clock
// (also where an authentication was cached); with no grace they stop at once; a negative grace
// is refused and changes nothing.
func TestKeyRotationGrace(t *testing.T) {
	t.Parallel()
	for _, grace := range []time.Duration{0, time.Microsecond, time.Hour, credit.DefaultRotationGrace} {
		t.Run(grace.String(), func(t *testing.T) {
			t.Parallel()
			env := newRuleEnv(t, "EUR")
			k := env.MustIssuedKey(t, env.store, "ERP sync", credit.ScopeReadCredit)
			scopes := []string{credit.ScopeReadCredit}
			authenticates(t, env, "before the rotation", k.Secret, k.ID, "ERP sync", scopes) // now cached
			events := len(env.feed(t))

			_, err := env.Service.Keys.Rotate(env.staff, k.ID, -time.Nanosecond)
			wantError(t, "a negative grace", err, credit.CodeValidationFailed, "grace")
			authenticates(t, env, "after a refused rotation", k.Secret, k.ID, "ERP sync", scopes)
			if n := len(env.feed(t)); n != events {
				t.Errorf("a refused rotation appended %d events", n-events)
			}

			rotatedAt := env.Clock.Now()
			next, err := env.Service.Keys.Rotate(env.staff, k.ID, grace)
			if err != nil || next.ID != k.ID || next.Secret == k.Secret || !strings.HasPrefix(next.Secret, "ck_") {
				t.Fatalf("rotate: %+v %v", next, err)
			}
			if !next.OldSecretsEnd.Equal(rotatedAt.Add(grace)) {
				t.Errorf("the old secrets end at %v, want %v", next.OldSecretsEnd, rotatedAt.Add(grace))
			}
			if got := env.feedTypes(t, events); !slices.Equal(got, []string{string(credit.EventTypeKeyRotated)}) {
				t.Errorf("events %v", got)
			}
			authenticates(t, env, "the new secret", next.Secret, k.ID, "ERP sync", scopes)
			if grace == 0 {
				refused(t, env, "the old secret, rotated without a grace", k.Secret)
			} else {
				authenticates(t, env, "the old secret at the rotation", k.Secret, k.ID, "ERP sync", scopes)
				env.Clock.Set(rotatedAt.Add(grace - time.Microsecond))
				authenticates(t, env, "the old secret a microsecond before its grace ends", k.Secret, k.ID, "ERP sync", scopes)
				env.Clock.Set(rotatedAt.Add(grace))
				refused(t, env, "the old secret when its grace ends", k.Secret)
			}
			env.Clock.Set(rotatedAt.Add(grace + 365*day))
			authenticates(t, env, "the new secret a year later", next.Secret, k.ID, "ERP sync", scopes)
		})
	}
}

// TestRotationDuringAGrace: a rotation during another's grace leaves the older secret's end as
// it was; each replaced secret ends with its own grace.
func TestRotationDuringAGrace(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	k := env.MustIssuedKey(t, env.store, "ERP sync", credit.ScopeWriteCredit)
	scopes := []string{credit.ScopeWriteCredit}
	t0 := env.Clock.Now()
	s1, err := env.Service.Keys.Rotate(env.staff, k.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(10 * time.Minute)
	s2, err := env.Service.Keys.Rotate(env.staff, k.ID, credit.DefaultRotationGrace)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{k.Secret, s1.Secret, s2.Secret} {
		authenticates(t, env, "during both graces", s, k.ID, "ERP sync", scopes)
	}
	env.Clock.Set(t0.Add(time.Hour))
	refused(t, env, "the first secret when its own grace ends", k.Secret)
	authenticates(t, env, "the second secret then", s1.Secret, k.ID, "ERP sync", scopes)
	env.Clock.Set(t0.Add(10*time.Minute + credit.DefaultRotationGrace))
	refused(t, env, "the second secret when its grace ends", s1.Secret)
	authenticates(t, env, "the current secret", s2.Secret, k.ID, "ERP sync", scopes)
}

// TestRevokeStopsEverySecretAtOnce: revoking a key stops all its secrets on the next
// authentication, cached or not, during a rotation's grace too; the key then is listed as
// revoked and can be neither revoked again nor rotated; other keys are untouched.
func TestRevokeStopsEverySecretAtOnce(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "100.00")
	k := env.MustIssuedKey(t, env.store, "ERP sync", credit.ScopeReadCredit)
	env.Clock.Advance(time.Second) // listed after k
	keep := env.MustIssuedKey(t, env.store, "Dashboard", credit.ScopeReadCredit)
	rotated, err := env.Service.Keys.Rotate(env.staff, k.ID, credit.DefaultRotationGrace)
	if err != nil {
		t.Fatal(err)
	}
	scopes := []string{credit.ScopeReadCredit}
	// Both secrets authenticate, and a read through the cache works.
	var reads []context.Context
	for _, s := range []string{k.Secret, rotated.Secret} {
		authenticates(t, env, "before the revocation", s, k.ID, "ERP sync", scopes)
		ctx, err := env.Service.Keys.AuthenticateRead(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		reads = append(reads, ctx)
	}
	events := len(env.feed(t))
	env.Clock.Advance(time.Minute)
	if err := env.Service.Keys.Revoke(env.staff, k.ID); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{k.Secret, rotated.Secret} {
		refused(t, env, "after the revocation", s)
	}
	// A read that trusted its cache before the revocation is refused by its own statement.
	for _, ctx := range reads {
		_, err := env.Service.Companies.Get(ctx, co.ID)
		wantError(t, "a cached read after the revocation", err, credit.CodeUnauthenticated, "")
	}
	authenticates(t, env, "another key", keep.Secret, keep.ID, "Dashboard", scopes)

	feed := env.feed(t)[events:]
	if len(feed) != 1 || feed[0].Type != credit.EventTypeKeyRevoked || !strings.Contains(string(feed[0].Data), `"previous":{"revoked_at":null}`) {
		t.Fatalf("events %+v", feed)
	}
	list, err := env.Service.Keys.List(env.staff, credit.DefaultStaleAfter)
	if err != nil || len(list) != 2 || list[0].ID != k.ID || list[0].RevokedAt == nil || !list[0].RevokedAt.Equal(env.Clock.Now()) || list[1].RevokedAt != nil {
		t.Fatalf("keys %+v %v", list, err)
	}
	err = env.Service.Keys.Revoke(env.staff, k.ID)
	wantError(t, "revoking again", err, credit.CodeNotFound, "")
	_, err = env.Service.Keys.Rotate(env.staff, k.ID, time.Hour)
	wantError(t, "rotating a revoked key", err, credit.CodeNotFound, "")
	for name, id := range map[string]string{"an unknown key": ids.New("key"), "a company's ID": co.ID, "empty": ""} {
		wantError(t, "revoking "+name, env.Service.Keys.Revoke(env.staff, id), credit.CodeNotFound, "")
		_, err := env.Service.Keys.Rotate(env.staff, id, time.Hour)
		wantError(t, "rotating "+name, err, credit.CodeNotFound, "")
	}
	if n := len(env.feed(t)); n != events+1 {
		t.Errorf("refused revocations and rotations appended %d events", n-events-1)
	}
}

// TestKeyScopes: each scope opens its operations and no other; the refusal names the scope
// needed.
func TestKeyScopes(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	co := env.MustCompany(t, env.store, "Buyer", "100.00")
	app := env.MustApplication(t, env.store, credit.ApplicationInput{BusinessName: "Applicant"})
	ops := []struct {
		name string
		need string // the refusal's words
		run  func(ctx context.Context) error
	}{
		{"read a company", "this call needs scope read_credit", func(ctx context.Context) error {
			_, err := env.Service.Companies.Get(ctx, co.ID)
			return err
		}},
		{"read its ledger", "this call needs scope read_credit", func(ctx context.Context) error {
			_, err := env.Service.Ledger.List(ctx, co.ID, credit.LedgerListParams{})
			return err
		}},
		{"read an application", "this call needs scope read_applications", func(ctx context.Context) error {
			_, err := env.Service.Applications.Get(ctx, app.ID)
			return err
		}},
		{"place a hold", "this call needs scope write_credit", func(ctx context.Context) error {
			_, err := env.Service.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: co.ID})
			if err == nil {
				_, err = env.Service.Companies.LiftHold(ctx, co.ID)
			}
			return err
		}},
		{"write under an Idempotency-Key", "this call needs scope write_credit", func(ctx context.Context) error {
			_, _, err := env.Service.Idempotency.Run(ctx, "", "", func(context.Context) ([]byte, bool, error) { return nil, true, nil })
			return err
		}},
		{"read the events", "this call needs scope read_credit or read_applications", func(ctx context.Context) error {
			_, err := env.Service.Events.List(ctx, credit.EventListParams{})
			return err
		}},
	}
	for _, tc := range []struct {
		scopes  []string
		allowed []string
	}{
		{[]string{credit.ScopeReadCredit}, []string{"read a company", "read its ledger", "read the events"}},
		{[]string{credit.ScopeReadApplications}, []string{"read an application", "read the events"}},
		{[]string{credit.ScopeWriteCredit}, []string{"place a hold", "write under an Idempotency-Key"}},
		{[]string{credit.ScopeReadCredit, credit.ScopeWriteCredit}, []string{"read a company", "read its ledger", "place a hold", "write under an Idempotency-Key", "read the events"}},
		{credit.AllScopes, []string{"read a company", "read its ledger", "read an application", "place a hold", "write under an Idempotency-Key", "read the events"}},
	} {
		secret := env.MustKey(t, env.store, "k", tc.scopes...)
		ctx, err := env.Service.Keys.Authenticate(context.Background(), secret)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			err := op.run(ctx)
			if slices.Contains(tc.allowed, op.name) {
				if err != nil {
					t.Errorf("%v may %s: %v", tc.scopes, op.name, err)
				}
				continue
			}
			wantError(t, strings.Join(tc.scopes, ",")+" to "+op.name, err, credit.CodeInsufficientScope, "")
			if err != nil && !strings.HasSuffix(err.Error(), op.need) {
				t.Errorf("%v to %s: %q, want %q", tc.scopes, op.name, err, op.need)
			}
		}
		// A key sees the events of its scopes only.
		if page, err := env.Service.Events.List(ctx, credit.EventListParams{}); err == nil {
			for _, ev := range page.Data {
				if v, _ := tenant.FromContext(ctx); !v.HasScope(credit.EventTypeScope(ev.Type)) {
					t.Errorf("%v reads %s", tc.scopes, ev.Type)
				}
			}
		}
	}
}

// TestKeyLastUsedAndCleanup: a key's first use is recorded at once, later ones at most once a
// minute; a key unused for 90 days (counted from its creation if never used) is suggested for
// cleanup, a revoked one never.
func TestKeyLastUsedAndCleanup(t *testing.T) {
	t.Parallel()
	env := newRuleEnv(t, "EUR")
	k := env.MustIssuedKey(t, env.store, "ERP sync", credit.ScopeReadCredit)
	revoked := env.MustIssuedKey(t, env.store, "Old", credit.ScopeReadCredit)
	if err := env.Service.Keys.Revoke(env.staff, revoked.ID); err != nil {
		t.Fatal(err)
	}
	created := env.Clock.Now()
	info := func(at time.Time) (credit.KeyInfo, credit.KeyInfo) {
		t.Helper()
		env.Clock.Set(at)
		list, err := env.Service.Keys.List(env.staff, credit.DefaultStaleAfter)
		if err != nil || len(list) != 2 {
			t.Fatalf("keys %+v %v", list, err)
		}
		if list[0].ID != k.ID { // created at the same moment: in ID order
			list[0], list[1] = list[1], list[0]
		}
		return list[0], list[1]
	}
	use := func(at time.Time) {
		t.Helper()
		env.Clock.Set(at)
		if _, err := env.Service.Keys.Authenticate(context.Background(), k.Secret); err != nil {
			t.Fatal(err)
		}
	}
	if got, old := info(created.Add(credit.DefaultStaleAfter - time.Microsecond)); got.LastUsedAt != nil || got.CleanupSuggested || old.CleanupSuggested {
		t.Errorf("a microsecond before 90 days unused: %+v", got)
	}
	if got, old := info(created.Add(credit.DefaultStaleAfter)); !got.CleanupSuggested || old.CleanupSuggested {
		t.Errorf("90 days unused since its creation: %+v, revoked %+v", got, old)
	}
	firstUse := created.Add(100 * day)
	use(firstUse)
	if got, _ := info(firstUse); got.LastUsedAt == nil || !got.LastUsedAt.Equal(firstUse) || got.CleanupSuggested {
		t.Errorf("after its first use: %+v", got)
	}
	use(firstUse.Add(59 * time.Second))
	if got, _ := info(firstUse.Add(59 * time.Second)); !got.LastUsedAt.Equal(firstUse) {
		t.Errorf("used again within the minute: last used %s, want %s", got.LastUsedAt, firstUse)
	}
	use(firstUse.Add(time.Minute))
	if got, _ := info(firstUse.Add(time.Minute)); !got.LastUsedAt.Equal(firstUse.Add(time.Minute)) {
		t.Errorf("used a minute later: last used %s", got.LastUsedAt)
	}
	if got, _ := info(firstUse.Add(time.Minute + credit.DefaultStaleAfter)); !got.CleanupSuggested {
		t.Errorf("90 days after its last use: %+v", got)
	}
}
