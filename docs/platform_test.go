package docs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/demo"
	"github.com/creditd/creditd/webhook"
)

// TestPlatformGuideResponses sends the platform guide's requests (its order delivery, its
// credit check, and a check for the demo company on hold) to creditd with the demo data and
// compares each answer with the JSON the guide shows for it: the same members, the same
// values, except IDs and timestamps, which only have to be of the same kind.
func TestPlatformGuideResponses(t *testing.T) {
	sealer := credittest.NewSealer(t)
	env := credittest.New(t, credittest.Options{ServiceOptions: func(o *credit.Options) {
		o.WebhookSealer = func() (*webhook.Sealer, error) { return sealer, nil }
	}})
	d, _, err := demo.Seed(context.Background(), env.Service)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("platform.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(raw)
	shellValue := func(name string) string {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + name + `='([^']*)'`).FindStringSubmatch(guide)
		if m == nil {
			m = regexp.MustCompile(`(?m)^` + name + `=(\S+)$`).FindStringSubmatch(guide)
		}
		if m == nil {
			t.Fatalf("platform.md sets no %s", name)
		}
		return m[1]
	}
	secret := shellValue("SECRET")
	if _, err := env.Service.Platform.RotateSecret(credittest.Staff(d.StoreID), secret, 0); err != nil {
		t.Fatal(err)
	}
	post := func(path, body string, header map[string]string) map[string]any {
		t.Helper()
		h := map[string]string{"X-Platform-Shop-Domain": demo.ShopDomain, "X-Platform-Hmac-Sha256": credit.SignPlatformBody(secret, []byte(body))}
		for k, v := range header {
			h[k] = v
		}
		return env.Do(t, credittest.Request{Method: http.MethodPost, Path: path, Body: body, Header: h}).WantStatus(t, http.StatusOK).JSON(t)
	}
	order := post("/platform/webhooks", shellValue("BODY"), map[string]string{
		"X-Platform-Topic": "orders/create", "X-Platform-Webhook-Id": "9f0c3b2e-order-7001", "X-Platform-Triggered-At": "2026-11-24T10:00:01Z"})
	approved := post("/platform/credit-checks", shellValue("CHECK"), nil)
	onHold := post("/platform/credit-checks", `{"company_id": "gid://platform/Company/1005", "amount": {"amount": "1.00", "currency": "EUR"}}`, nil)

	examples := fences(t, "platform.md", "json")
	if len(examples) != 3 {
		t.Fatalf("platform.md has %d JSON examples, want 3 (the delivery's answer and two credit checks)", len(examples))
	}
	for i, real := range []map[string]any{order, approved, onHold} {
		var documented map[string]any
		if err := json.Unmarshal([]byte(examples[i]), &documented); err != nil {
			t.Fatalf("JSON example %d: %v", i+1, err)
		}
		sameJSON(t, "example "+string(rune('1'+i)), documented, real)
	}
}

var (
	documentedID = regexp.MustCompile(`^[a-z]{2,3}_[0-9A-Za-z]{22}$`)
	timestamp    = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$`)
)

// sameJSON compares a documented JSON value with a real one: the same members and values,
// where IDs and timestamps need only be of the same kind (the same prefix, a timestamp).
func sameJSON(t *testing.T, where string, documented, real any) {
	t.Helper()
	switch doc := documented.(type) {
	case map[string]any:
		r, ok := real.(map[string]any)
		if !ok || len(r) != len(doc) {
			t.Errorf("%s: documented %v, real %v", where, documented, real)
			return
		}
		for k, v := range doc {
			rv, ok := r[k]
			if !ok {
				t.Errorf("%s: the real answer has no %q", where, k)
				continue
			}
			sameJSON(t, where+"."+k, v, rv)
		}
	case string:
		r, _ := real.(string)
		switch {
		case documentedID.MatchString(doc):
			prefix, _, _ := strings.Cut(doc, "_")
			if !documentedID.MatchString(r) || !strings.HasPrefix(r, prefix+"_") {
				t.Errorf("%s: documented an ID like %s, real %v", where, doc, real)
			}
		case timestamp.MatchString(doc):
			if !timestamp.MatchString(r) {
				t.Errorf("%s: documented a timestamp, real %v", where, real)
			}
		case doc != r:
			t.Errorf("%s: documented %q, real %v", where, doc, real)
		}
	default:
		if documented != real {
			t.Errorf("%s: documented %v, real %v", where, documented, real)
		}
	}
}
