package credit

import (
	"context"
	"strings"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/platformdelivery"
)

// A company's platform company GID names it in the platform's deliveries (contract §13). An
// approval may leave it out (the customer may not exist on the platform yet); staff set or
// correct it later, and then retry the deliveries that failed for want of it.

// SetPlatformCompanyGID sets or corrects a company's platform company GID, on its timeline
// under the staff member's name. A GID names at most one company of a store: the unique index
// (store_id, platform_company_gid) decides, also between concurrent writes, and its refusal is
// the error below. Setting the GID the company already has changes nothing.
//
// Errors: insufficient_scope (not staff), not_found (company), validation_failed
// (platform_company_gid: not a company GID, or another company of the store has it).
func (s *Companies) SetPlatformCompanyGID(ctx context.Context, companyID, gid string) (Company, error) {
	if _, err := requireStaff(ctx); err != nil {
		return Company{}, err
	}
	gid = strings.TrimSpace(gid)
	if !companyGIDPattern.MatchString(gid) {
		return Company{}, ParamErrorf(CodeValidationFailed, "platform_company_gid", "platform_company_gid must look like gid://platform/Company/123")
	}
	var out Company
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		c, err := s.companies.lockCompany(ctx, tx, companyID)
		if err != nil {
			return err
		}
		previous := c.PlatformCompanyGid
		if previous != nil && *previous == gid {
			out = companyView(c, c.Edges.Store)
			return nil
		}
		c, err = saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) { u.SetPlatformCompanyGid(gid).SetUpdatedAt(s.clock.Now()) })
		if s.db.ViolatedIndex(err) == companyGIDIndex {
			return errCompanyGIDTaken(gid)
		}
		if err != nil {
			return err
		}
		out = companyView(c, c.Edges.Store)
		if err := s.events.emit(ctx, tx, c.StoreID, EventTypeCompanyPlatformGIDChanged, out,
			map[string]any{"platform_company_gid": previous}); err != nil {
			return err
		}
		if err := s.events.recordEvent(ctx, tx, c, TimelinePlatformCompanyGIDChanged, map[string]any{
			"previous_platform_company_gid": previous,
			"platform_company_gid":          gid,
		}); err != nil {
			return err
		}
		return nil
	})
	return out, s.companies.nameGIDHolder(ctx, err)
}

// maxFailedForCompany bounds the failed deliveries Inbox.FailedFor reads.
const maxFailedForCompany = 250

// FailedFor returns the store's failed platform deliveries that concern a company,
// newest first: those recorded against it, and those that failed as unknown_company naming
// its platform company GID (which a retry applies once the GID is set). At most 250.
//
// Errors: insufficient_scope (not staff), not_found (company).
func (s *Inbox) FailedFor(ctx context.Context, companyID string) ([]InboxDelivery, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	client := s.db.Reader(ctx)
	c, err := s.companies.loadCompany(ctx, client, companyID)
	if err != nil {
		return nil, err
	}
	match := platformdelivery.CompanyID(c.ID)
	if c.PlatformCompanyGid != nil {
		match = platformdelivery.Or(match, platformdelivery.Reason(ReasonUnknownCompany))
	}
	rows, err := client.PlatformDelivery.Query().
		Where(platformdelivery.StatusEQ(platformdelivery.StatusFailed), match).
		Order(ent.Desc(platformdelivery.FieldReceivedAt), ent.Desc(platformdelivery.FieldID)).
		Limit(maxFailedForCompany).All(ctx)
	if err != nil {
		return nil, err
	}
	cur := c.Edges.Store.Currency
	out := []InboxDelivery{}
	for _, r := range rows {
		d := inboxDetailView(r, cur)
		if (r.CompanyID != nil && *r.CompanyID == c.ID) || (c.PlatformCompanyGid != nil && d.CompanyGID == *c.PlatformCompanyGid) {
			out = append(out, d)
		}
	}
	return out, nil
}

// inboxDetailView is inboxView with what the body says for people: the company GID and the
// amount (an order's total, a payment's or refund's amount), when it says them.
func inboxDetailView(d *ent.PlatformDelivery, currency string) InboxDelivery {
	v := inboxView(d)
	ev := parsePlatformEvent(d.Topic, d.Body, currency)
	v.CompanyGID = ev.companyGID
	if !ev.amount.IsZero() {
		m := NewMoney(ev.amount.Abs(), currency)
		v.Amount = &m
	}
	return v
}

// companiesByGID returns the names and IDs of the store's companies with these GIDs.
func companiesByGID(ctx context.Context, client *ent.Client, gids []string) (map[string]*ent.Company, error) {
	out := map[string]*ent.Company{}
	if len(gids) == 0 {
		return out, nil
	}
	rows, err := client.Company.Query().Where(company.PlatformCompanyGidIn(gids...)).
		Select(company.FieldID, company.FieldName, company.FieldPlatformCompanyGid).All(ctx)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		out[*r.PlatformCompanyGid] = r
	}
	return out, nil
}
