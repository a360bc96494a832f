package credit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/credittest"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Tenant isolation at the domain: a store's staff and keys reach their own store's records
// only. Another store's record answers exactly as an unknown ID of its kind does, through
// every service, and none of its records is listed, counted or changed.

// tenantData is a store with a record of every kind.
type tenantData struct {
	store, shop      string
	key              credit.IssuedKey
	company          string
	entry, invoice   string
	timelineEvent    string
	application      string
	staff            string
	endpoint         string
	event            string // the store's first event
	delivery         string // a failed platform delivery
	staffCtx, keyCtx context.Context
}

func newTenantData(t *testing.T, env *credittest.ServiceEnv, name string) *tenantData {
	t.Helper()
	d := &tenantData{store: env.MustStore(t, name, "EUR"), shop: strings.ToLower(name) + ".myplatform.com"}
	d.staffCtx = credittest.Staff(d.store)
	d.key = env.MustIssuedKey(t, d.store, name+" ERP", credit.AllScopes...)
	ctx, err := env.Service.Keys.Authenticate(context.Background(), d.key.Secret)
	if err != nil {
		t.Fatal(err)
	}
	d.keyCtx = ctx
	co := env.MustCompany(t, d.store, name+" Buyer", "5000.00")
	d.company = co.ID
	d.entry = env.MustRecord(t, credit.LedgerEntryInput{CompanyID: co.ID, Kind: credit.KindOrderPlaced, Amount: "100.00", OrderGID: orderGID(1)}).ID
	inv, err := env.Service.Invoices.List(d.staffCtx, co.ID, credit.InvoiceListParams{})
	if err != nil || len(inv.Data) != 1 {
		t.Fatalf("invoices %+v %v", inv, err)
	}
	d.invoice = inv.Data[0].ID
	tl, err := env.Service.Timeline.List(d.staffCtx, co.ID, credit.ListParams{})
	if err != nil || len(tl.Data) == 0 {
		t.Fatalf("timeline %+v %v", tl, err)
	}
	d.timelineEvent = tl.Data[0].ID
	d.application = env.MustApplication(t, d.store, credit.ApplicationInput{BusinessName: name + " Applicant", ContactEmail: "ada@example.com"}).ID
	d.staff = env.MustStaff(t, d.store, name+" Staff", strings.ToLower(name)+"@example.com", staffPassword).ID
	issued, err := env.Service.Webhooks.CreateEndpoint(d.staffCtx, credit.WebhookEndpointInput{URL: "https://hooks.example.com/" + name})
	if err != nil {
		t.Fatal(err)
	}
	d.endpoint = issued.ID
	if _, err := env.Service.Platform.Connect(d.staffCtx, d.shop, platformTestSecret); err != nil {
		t.Fatal(err)
	}
	body := []byte(order(500, "gid://platform/Company/999", "40.00"))
	pctx, err := env.Service.Platform.Authenticate(context.Background(), d.shop, credit.SignPlatformBody(platformTestSecret, body), body)
	if err != nil {
		t.Fatal(err)
	}
	failed, err := env.Service.Inbox.Receive(pctx, credit.PlatformDeliveryInput{Topic: "orders/create", WebhookID: "w-" + name, Body: body})
	if err != nil || failed.Status != "failed" {
		t.Fatalf("a delivery for an unknown company: %+v %v", failed, err)
	}
	d.delivery = failed.ID
	events, err := env.Service.Events.List(d.staffCtx, credit.EventListParams{})
	if err != nil || len(events.Data) == 0 {
		t.Fatalf("events %+v %v", events, err)
	}
	d.event = events.Data[0].ID
	return d
}

// snapshot records what the isolation test must find unchanged.
func (d *tenantData) snapshot(t *testing.T, env *credittest.ServiceEnv) (company, application string, feed, timeline int) {
	t.Helper()
	c, err := env.Service.Companies.Get(d.staffCtx, d.company)
	if err != nil {
		t.Fatal(err)
	}
	a, err := env.Service.Applications.Get(d.staffCtx, d.application)
	if err != nil {
		t.Fatal(err)
	}
	limit := credit.MaxPageSize
	events, err := env.Service.Events.List(d.staffCtx, credit.EventListParams{ListParams: credit.ListParams{Limit: &limit}})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := env.Service.Timeline.List(d.staffCtx, d.company, credit.ListParams{Limit: &limit})
	if err != nil {
		t.Fatal(err)
	}
	return asJSON(c), asJSON(a), len(events.Data), len(tl.Data)
}

// isolationOp is one operation of a service on a record named by its ID.
type isolationOp struct {
	service, name string
	kind          string // the ID's kind: its prefix
	staffOnly     bool
	run           func(ctx context.Context, id string) error
}

func isolationOps(env *credittest.ServiceEnv, mine *tenantData) []isolationOp {
	svc := env.Service
	return []isolationOp{
		{"Companies", "Get", "co", false, func(ctx context.Context, id string) error { _, err := svc.Companies.Get(ctx, id); return err }},
		{"Companies", "PlaceHold", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: id, Note: ptr("x")})
			return err
		}},
		{"Companies", "LiftHold", "co", false, func(ctx context.Context, id string) error { _, err := svc.Companies.LiftHold(ctx, id); return err }},
		{"Companies", "SetCreditLimit", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Companies.SetCreditLimit(ctx, credit.CreditLimitInput{CompanyID: id, Amount: credit.Amount("1.00")})
			return err
		}},
		{"Companies", "SetPlatformCompanyGID", "co", true, func(ctx context.Context, id string) error {
			_, err := svc.Companies.SetPlatformCompanyGID(ctx, id, "gid://platform/Company/4242")
			return err
		}},
		{"Ledger", "Get", "le", false, func(ctx context.Context, id string) error { _, err := svc.Ledger.Get(ctx, id); return err }},
		{"Ledger", "List", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Ledger.List(ctx, id, credit.LedgerListParams{})
			return err
		}},
		{"Ledger", "List after an entry", "le", false, func(ctx context.Context, id string) error {
			_, err := svc.Ledger.List(ctx, mine.company, credit.LedgerListParams{After: id})
			return err
		}},
		{"Ledger", "CreateAdjustment", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Ledger.CreateAdjustment(ctx, credit.AdjustmentInput{CompanyID: id, Amount: credit.Amount("1.00"), Note: ptr("n")})
			return err
		}},
		{"Ledger", "Record", "co", true, func(ctx context.Context, id string) error {
			_, _, err := svc.Ledger.Record(ctx, credit.LedgerEntryInput{CompanyID: id, Kind: credit.KindAdjustment, Amount: "1.00"})
			return err
		}},
		{"Ledger", "Recorders", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Ledger.Recorders(ctx, id, nil)
			return err
		}},
		{"Invoices", "Get", "inv", false, func(ctx context.Context, id string) error { _, err := svc.Invoices.Get(ctx, id); return err }},
		{"Invoices", "List", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Invoices.List(ctx, id, credit.InvoiceListParams{})
			return err
		}},
		{"Timeline", "Get", "tl", false, func(ctx context.Context, id string) error { _, err := svc.Timeline.Get(ctx, id); return err }},
		{"Timeline", "List", "co", false, func(ctx context.Context, id string) error {
			_, err := svc.Timeline.List(ctx, id, credit.ListParams{})
			return err
		}},
		{"Applications", "Get", "app", false, func(ctx context.Context, id string) error { _, err := svc.Applications.Get(ctx, id); return err }},
		{"Applications", "SetStatus", "app", true, func(ctx context.Context, id string) error {
			_, _, err := svc.Applications.SetStatus(ctx, credit.StatusChange{ApplicationID: id, Status: credit.AppInReview})
			return err
		}},
		{"Applications", "History", "app", true, func(ctx context.Context, id string) error {
			_, err := svc.Applications.History(ctx, id)
			return err
		}},
		{"Applications", "OfCompany", "co", true, func(ctx context.Context, id string) error {
			_, err := svc.Applications.OfCompany(ctx, id)
			return err
		}},
		{"Keys", "Rotate", "key", true, func(ctx context.Context, id string) error { _, err := svc.Keys.Rotate(ctx, id, time.Hour); return err }},
		{"Keys", "Revoke", "key", true, func(ctx context.Context, id string) error { return svc.Keys.Revoke(ctx, id) }},
		{"Staff", "Disable", "stf", true, func(ctx context.Context, id string) error { _, err := svc.Staff.Disable(ctx, id); return err }},
		{"Staff", "ResetPassword", "stf", true, func(ctx context.Context, id string) error {
			return svc.Staff.ResetPassword(ctx, id, "another long password")
		}},
		{"Events", "Get", "ev", false, func(ctx context.Context, id string) error { _, err := svc.Events.Get(ctx, id); return err }},
		{"Events", "List after an event", "ev", false, func(ctx context.Context, id string) error {
			_, err := svc.Events.List(ctx, credit.EventListParams{After: id})
			return err
		}},
		{"Webhooks", "SetEndpointEnabled", "we", true, func(ctx context.Context, id string) error {
			_, err := svc.Webhooks.SetEndpointEnabled(ctx, id, false)
			return err
		}},
		{"Webhooks", "RotateSecret", "we", true, func(ctx context.Context, id string) error {
			_, err := svc.Webhooks.RotateSecret(ctx, id, time.Hour)
			return err
		}},
		{"Webhooks", "Deliveries", "we", true, func(ctx context.Context, id string) error {
			_, err := svc.Webhooks.Deliveries(ctx, id, 10)
			return err
		}},
		{"Webhooks", "Ping", "we", true, func(ctx context.Context, id string) error { _, err := svc.Webhooks.Ping(ctx, id); return err }},
		{"Webhooks", "Redeliver to an endpoint", "we", true, func(ctx context.Context, id string) error {
			_, err := svc.Webhooks.Redeliver(ctx, mine.event, id)
			return err
		}},
		{"Webhooks", "Redeliver an event", "ev", true, func(ctx context.Context, id string) error {
			_, err := svc.Webhooks.Redeliver(ctx, id, mine.endpoint)
			return err
		}},
		{"Webhooks", "DeleteEndpoint", "we", true, func(ctx context.Context, id string) error { return svc.Webhooks.DeleteEndpoint(ctx, id) }},
		{"Inbox", "Retry", "pd", true, func(ctx context.Context, id string) error { _, err := svc.Inbox.Retry(ctx, id); return err }},
	}
}

// idOf returns the record of kind that d has.
func (d *tenantData) idOf(kind string) string {
	return map[string]string{
		"co": d.company, "le": d.entry, "inv": d.invoice, "tl": d.timelineEvent, "app": d.application,
		"key": d.key.ID, "stf": d.staff, "ev": d.event, "we": d.endpoint, "pd": d.delivery,
	}[kind]
}

// TestAnotherStoresRecordsAreUnknown: every operation that names a record answers for another
// store's record exactly what it answers for an unknown ID of its kind, for the store's staff
// and its keys alike, and changes nothing of the other store's.
func TestAnotherStoresRecordsAreUnknown(t *testing.T) {
	t.Parallel()
	env := credittest.NewService(t, sealingOptions(t, false))
	mine := newTenantData(t, env, "Mine")
	theirs := newTenantData(t, env, "Theirs")
	company, application, feed, timeline := theirs.snapshot(t, env)

	for _, op := range isolationOps(env, mine) {
		viewers := map[string]context.Context{"staff": mine.staffCtx}
		if !op.staffOnly {
			viewers["an API key"] = mine.keyCtx
		}
		for who, ctx := range viewers {
			name := fmt.Sprintf("%s.%s by %s", op.service, op.name, who)
			unknownID := ids.New(op.kind)
			if op.kind == "tl" {
				unknownID = ids.New("ev")
			}
			unknown := op.run(ctx, unknownID)
			foreign := op.run(ctx, theirs.idOf(op.kind))
			if unknown == nil || foreign == nil || foreign.Error() != unknown.Error() {
				t.Errorf("%s: another store's record answers %v; an unknown one %v", name, foreign, unknown)
			}
			if c := credit.CodeOf(foreign); c != credit.CodeNotFound && c != credit.CodeInvalidParameter {
				t.Errorf("%s: %v, want not_found (or invalid_parameter for a list's position)", name, foreign)
			}
		}
	}

	// The batched reads leave another store's records out, as unknown ones.
	ctx := mine.keyCtx
	both := []string{mine.company, theirs.company}
	batches := map[string]func() ([]string, error){
		"Companies.GetMany": func() ([]string, error) { m, err := env.Service.Companies.GetMany(ctx, both); return keysOf(m), err },
		"Ledger.FirstPages": func() ([]string, error) {
			m, err := env.Service.Ledger.FirstPages(ctx, both, nil)
			return keysOf(m), err
		},
		"Invoices.FirstPages": func() ([]string, error) {
			m, err := env.Service.Invoices.FirstPages(ctx, both, "", nil)
			return keysOf(m), err
		},
		"Timeline.FirstPages": func() ([]string, error) {
			m, err := env.Service.Timeline.FirstPages(ctx, both, nil)
			return keysOf(m), err
		},
		"Reports.CompanyAging": func() ([]string, error) {
			m, err := env.Service.Reports.CompanyAging(ctx, both)
			return keysOf(m), err
		},
	}
	for name, batch := range batches {
		if got, err := batch(); err != nil || !slices.Equal(got, []string{mine.company}) {
			t.Errorf("%s of both stores' companies: %v %v, want only %s", name, got, err, mine.company)
		}
	}

	// The lists show the store's own records only.
	theirIDs := []string{theirs.store, theirs.company, theirs.entry, theirs.invoice, theirs.application, theirs.key.ID, theirs.staff,
		theirs.endpoint, theirs.event, theirs.delivery, theirs.shop}
	lists := map[string]func() (any, error){
		"Companies.List":    func() (any, error) { return env.Service.Companies.List(mine.keyCtx, credit.CompanyListParams{}) },
		"Applications.List": func() (any, error) { return env.Service.Applications.List(mine.keyCtx, credit.ApplicationListParams{}) },
		"Events.List":       func() (any, error) { return env.Service.Events.List(mine.keyCtx, credit.EventListParams{}) },
		"Keys.List":         func() (any, error) { return env.Service.Keys.List(mine.staffCtx, credit.DefaultStaleAfter) },
		"Staff.List":        func() (any, error) { return env.Service.Staff.List(mine.staffCtx) },
		"Webhooks.ListEndpoints": func() (any, error) {
			return env.Service.Webhooks.ListEndpoints(mine.staffCtx)
		},
		"Inbox.List":                   func() (any, error) { return env.Service.Inbox.List(mine.staffCtx, credit.InboxListParams{}) },
		"Reports.ReceivablesByCompany": func() (any, error) { return env.Service.Reports.ReceivablesByCompany(mine.keyCtx, false) },
		"Reports.Receivables":          func() (any, error) { return env.Service.Reports.Receivables(mine.keyCtx) },
		"Stores.Current":               func() (any, error) { return env.Service.Stores.Current(mine.staffCtx) },
		"Platform.Status":              func() (any, error) { return env.Service.Platform.Status(mine.staffCtx) },
	}
	for name, list := range lists {
		got, err := list()
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		text := asJSON(got)
		for _, id := range theirIDs {
			if strings.Contains(text, id) {
				t.Errorf("%s shows another store's %s: %s", name, id, text)
			}
		}
		if name != "Reports.Receivables" && name != "Stores.Current" && name != "Platform.Status" && name != "Reports.ReceivablesByCompany" && !strings.Contains(text, mine.idOf(listKind[name])) {
			t.Errorf("%s does not show the store's own %s: %s", name, listKind[name], text)
		}
	}
	// The store's receivables count its own invoice only.
	if r, err := env.Service.Reports.Receivables(mine.keyCtx); err != nil || !strings.Contains(asJSON(r), `"amount":"100.00"`) || strings.Contains(asJSON(r), `"amount":"200.00"`) {
		t.Errorf("receivables %s %v, want the store's own 100.00", asJSON(r), err)
	}
	// Erasing a person erases them in the store only.
	if n, err := env.Service.Applications.ErasePerson(mine.staffCtx, "ada@example.com"); err != nil || n != 1 {
		t.Errorf("erase: %d %v, want the store's one application", n, err)
	}
	// A key authenticates in its own store only.
	if v, _ := tenant.FromContext(theirs.keyCtx); v.StoreID != theirs.store {
		t.Errorf("their key's viewer %+v", v)
	}

	// Nothing of theirs changed.
	c2, a2, f2, tl2 := theirs.snapshot(t, env)
	if c2 != company || a2 != application || f2 != feed || tl2 != timeline {
		t.Errorf("another store changed:\ncompany %s\n   then %s\napplication %s\n       then %s\nevents %d then %d, timeline %d then %d",
			company, c2, application, a2, feed, f2, timeline, tl2)
	}
	if _, err := env.Service.Keys.Authenticate(context.Background(), theirs.key.Secret); err != nil {
		t.Errorf("their key after the foreign writes: %v", err)
	}
	eps, err := env.Service.Webhooks.ListEndpoints(theirs.staffCtx)
	if err != nil || len(eps) != 1 || eps[0].Status != "enabled" || eps[0].PreviousSecretExpiresAt != nil {
		t.Errorf("their endpoint after the foreign writes: %+v %v", eps, err)
	}
	members, err := env.Service.Staff.List(theirs.staffCtx)
	if err != nil || len(members) != 1 || members[0].DisabledAt != nil {
		t.Errorf("their staff after the foreign writes: %+v %v", members, err)
	}
	if _, _, err := env.Service.Staff.SignIn(context.Background(), "theirs@example.com", staffPassword, credit.SessionPolicy{}); err != nil {
		t.Errorf("their staff member's password after the foreign writes: %v", err)
	}
}

// listKind names the kind of record each list of TestAnotherStoresRecordsAreUnknown must show.
var listKind = map[string]string{
	"Companies.List": "co", "Applications.List": "app", "Events.List": "ev", "Keys.List": "key",
	"Staff.List": "stf", "Webhooks.ListEndpoints": "we", "Inbox.List": "pd",
}

// keysOf returns a map's keys, sorted.
func keysOf[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
