// Package demo seeds the demo data of `creditd serve --demo`: a store with companies, ledgers,
// holds, applications and keys, made through the domain's own operations by the store's staff,
// exactly as an admin would make them.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/creditd/creditd/credit"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// StoreName is the demo store's name.
const StoreName = "Demo Wholesale GmbH"

// Demo is what Seed created: the store and one key of each kind.
type Demo struct {
	StoreID string
	Keys    []Key
	// ShopDomain is the shop connected to the store, "" when it could not be (no master key).
	ShopDomain string
}

// Key is a demo key with its secret.
type Key struct {
	Label  string
	Scopes []string
	credit.IssuedKey
}

// Seed fills an empty database with a demo store: companies with ledgers (one overdue order,
// one manual hold), applications in every status, and three keys: read-only, read with
// applications, and full access. It returns seeded=false and does nothing when the database
// already has a store.
func Seed(ctx context.Context, s *credit.Service) (demo Demo, seeded bool, err error) {
	stores, err := s.Stores.List(ctx)
	if err != nil || len(stores) > 0 {
		return Demo{}, false, err
	}
	st, err := s.Stores.Create(ctx, StoreName, "EUR", credit.DefaultBufferPercent)
	if err != nil {
		return Demo{}, false, err
	}
	demo.StoreID = st.ID
	ctx = tenant.Staff(ctx, st.ID, "Demo Admin")
	now := s.Now()
	day := 24 * time.Hour
	ts := func(d time.Duration) *credit.Timestamp { t := credit.At(now.Add(-d)); return &t }

	type entry struct {
		kind, amount, order string
		ago                 time.Duration
	}
	companies := []struct {
		name, gid, terms, limit string
		entries                 []entry
	}{
		{"Alpenblick Hotels AG", "gid://platform/Company/1001", "NET_30", "25000.00", []entry{
			{credit.KindOpeningBalance, "1200.00", "", 120 * day},
			{credit.KindOrderPlaced, "4800.00", "gid://platform/Order/5001", 20 * day},
			{credit.KindPayment, "-1200.00", "", 15 * day},
			{credit.KindOrderPlaced, "2350.50", "gid://platform/Order/5002", 5 * day},
		}},
		{"Brauhaus Kessler KG", "gid://platform/Company/1002", "NET_14", "8000.00", []entry{
			{credit.KindOrderPlaced, "3100.00", "gid://platform/Order/5003", 20 * day},
			{credit.KindRefund, "-150.00", "gid://platform/Order/5003", 18 * day},
		}},
		{"Café Morgenrot", "gid://platform/Company/1003", "NET_30", "5000.00", []entry{
			{credit.KindOrderPlaced, "980.00", "gid://platform/Order/5004", 3 * day},
			{credit.KindPayment, "-980.00", "gid://platform/Order/5004", 1 * day},
		}},
		{"Nordlicht Feinkost GmbH", "gid://platform/Company/1004", "NET_60", "40000.00", []entry{
			{credit.KindOrderPlaced, "12500.00", "gid://platform/Order/5005", 40 * day},
			{credit.KindOrderPlaced, "7300.00", "gid://platform/Order/5006", 25 * day},
			{credit.KindCancellation, "-7300.00", "gid://platform/Order/5006", 24 * day},
		}},
		{"Seeblick Catering", "gid://platform/Company/1005", "NET_30", "12000.00", nil},
	}
	var last credit.Company
	for _, c := range companies {
		co, err := s.Companies.Create(ctx, credit.CompanyInput{Name: c.name, PlatformCompanyGID: c.gid, PaymentTerms: c.terms, CreditLimit: c.limit})
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo company: %w", err)
		}
		for _, e := range c.entries {
			if _, _, err := s.Ledger.Record(ctx, credit.LedgerEntryInput{CompanyID: co.ID, Kind: e.kind, Amount: e.amount, OrderGID: e.order, OccurredAt: ts(e.ago)}); err != nil {
				return Demo{}, false, fmt.Errorf("demo ledger: %w", err)
			}
		}
		last = co
	}
	// Brauhaus Kessler's order is past its NET_14 due date, so it carries an overdue hold;
	// Seeblick Catering gets a manual hold from staff.
	note := "Awaiting signed credit agreement"
	if _, err := s.Companies.PlaceHold(ctx, credit.HoldInput{CompanyID: last.ID, Note: &note}); err != nil {
		return Demo{}, false, fmt.Errorf("demo hold: %w", err)
	}

	apps := []struct {
		business, vat, name, email, status string
		ago                                time.Duration
	}{
		{"Gasthof Zur Linde", "DE123456789", "Maria Huber", "maria.huber@example.com", credit.AppSubmitted, 2 * day},
		{"Weinkontor Rhein", "DE987654321", "Jonas Weber", "jonas.weber@example.com", credit.AppInReview, 4 * day},
		{"Bäckerei Sonnenschein", "ATU12345678", "Lena Gruber", "lena.gruber@example.com", credit.AppNeedsInfo, 6 * day},
		{"Hafenküche Kiel", "DE111222333", "Tom Jensen", "tom.jensen@example.com", credit.AppRejected, 9 * day},
	}
	for _, a := range apps {
		created, err := s.Applications.Create(ctx, credit.ApplicationInput{BusinessName: a.business, VATNumber: a.vat, VATStatus: "valid", VATRegistry: "VIES", ContactName: a.name, ContactEmail: a.email, SubmittedAt: ts(a.ago)})
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo application: %w", err)
		}
		path := map[string][]string{
			credit.AppInReview:  {credit.AppInReview},
			credit.AppNeedsInfo: {credit.AppInReview, credit.AppNeedsInfo},
			credit.AppRejected:  {credit.AppInReview, credit.AppRejected},
		}[a.status]
		for _, status := range path {
			if _, _, err := s.Applications.SetStatus(ctx, credit.StatusChange{ApplicationID: created.ID, Status: status}); err != nil {
				return Demo{}, false, fmt.Errorf("demo application status: %w", err)
			}
		}
	}

	for _, k := range []struct {
		label  string
		scopes []string
	}{
		{"demo read-only", []string{credit.ScopeReadCredit}},
		{"demo dashboard", []string{credit.ScopeReadCredit, credit.ScopeReadApplications}},
		{"demo ERP (full access)", []string{credit.ScopeReadCredit, credit.ScopeReadApplications, credit.ScopeWriteCredit}},
	} {
		issued, err := s.Keys.Create(ctx, k.label, k.scopes)
		if err != nil {
			return Demo{}, false, fmt.Errorf("demo key: %w", err)
		}
		demo.Keys = append(demo.Keys, Key{Label: k.label, Scopes: k.scopes, IssuedKey: issued})
	}
	// The platform connector (contract §13), so `creditd platform send` can play the shop.
	// Without a master key to seal its secret (PostgreSQL without CREDITD_WEBHOOK_KEY) the
	// demo goes without it.
	switch _, err := s.Platform.Connect(ctx, ShopDomain, "demo_"+ids.Random(32)); {
	case errors.Is(err, credit.ErrNoWebhookKey):
	case err != nil:
		return Demo{}, false, fmt.Errorf("demo platform connection: %w", err)
	default:
		demo.ShopDomain = ShopDomain
	}
	return demo, true, nil
}

// ShopDomain is the demo store's shop on the platform.
const ShopDomain = "demo-wholesale.myplatform.com"

// PlatformCompanyGID is the demo company that `serve --demo`'s platform send line orders for:
// Café Morgenrot, whose orders are paid and which has no hold.
const PlatformCompanyGID = "gid://platform/Company/1003"
