package credit

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ids"
)

// Company statuses, derived from the hold (contract §5).
const (
	StatusApproved = "approved"
	StatusOnHold   = "on_hold"
)

var (
	companyGIDPattern = regexp.MustCompile(`^gid://platform/Company/[0-9]{1,20}$`)
	orderGIDPattern   = regexp.MustCompile(`^gid://platform/Order/[0-9]{1,20}$`)
	paymentTerms      = regexp.MustCompile(`^NET_([0-9]{1,3})$`)
)

// ParsePaymentTerms reads a NET_<days> code with days from 1 to 365.
//
// Errors: validation_failed (param).
func ParsePaymentTerms(s, param string) (int, error) {
	m := paymentTerms.FindStringSubmatch(s)
	if m == nil {
		return 0, ParamErrorf(CodeValidationFailed, param, "%s must be NET_<days>, such as NET_30", param)
	}
	days, _ := strconv.Atoi(m[1])
	if days < 1 || days > 365 {
		return 0, ParamErrorf(CodeValidationFailed, param, "%s must be between NET_1 and NET_365", param)
	}
	return days, nil
}

// CompanyListParams are the inputs of ListCompanies.
type CompanyListParams struct {
	ListParams
	// Status is "", "approved" or "on_hold".
	Status string
	// UpdatedSince keeps companies updated at or after this instant.
	UpdatedSince *Timestamp
}

// ListCompanies lists the viewer's store's companies by updated_at then ID, ascending.
//
// Errors: insufficient_scope, invalid_parameter (status, limit, cursor).
func (s *Service) ListCompanies(ctx context.Context, p CompanyListParams) (Page[Company], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[Company]{}, err
	}
	n, err := pageSize(p.Limit, p.limitName())
	if err != nil {
		return Page[Company]{}, err
	}
	st, err := s.viewerStore(ctx)
	if err != nil {
		return Page[Company]{}, err
	}
	q := s.reader(ctx).Company.Query()
	switch p.Status {
	case "":
	case StatusApproved:
		q.Where(company.HoldKindIsNil())
	case StatusOnHold:
		q.Where(company.HoldKindNotNil())
	default:
		return Page[Company]{}, ParamErrorf(CodeInvalidParameter, "status", "status must be approved or on_hold")
	}
	list := "companies|" + p.Status
	if p.UpdatedSince != nil {
		q.Where(company.UpdatedAtGTE(p.UpdatedSince.Time))
		list += "|" + p.UpdatedSince.String()
	}
	if p.Cursor != "" {
		c, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[Company]{}, p.renameCursorErr(err)
		}
		t := time.UnixMicro(c.Time).UTC()
		q.Where(company.Or(company.UpdatedAtGT(t), company.And(company.UpdatedAtEQ(t), company.IDGT(c.ID))))
	}
	rows, err := q.Order(ent.Asc(company.FieldUpdatedAt), ent.Asc(company.FieldID)).Limit(n + 1).All(ctx)
	if err != nil {
		return Page[Company]{}, err
	}
	return makePage(rows, n, func(c *ent.Company) Company { return companyView(c, st) },
		func(c *ent.Company) string {
			return encodeCursor(st.CursorSecret, cursorPayload{List: list, Time: c.UpdatedAt.UnixMicro(), ID: c.ID})
		}), nil
}

// makePage turns up to n+1 rows into a page of n items, with a cursor after each.
func makePage[R any, T any](rows []R, n int, view func(R) T, cursor func(R) string) Page[T] {
	p := Page[T]{Data: make([]T, 0, min(len(rows), n))}
	if len(rows) > n {
		rows = rows[:n]
		p.HasMore = true
	}
	for _, r := range rows {
		p.Data = append(p.Data, view(r))
	}
	p.cursor = func(i int) string { return cursor(rows[i]) }
	if p.HasMore {
		next := p.cursor(len(rows) - 1)
		p.NextCursor = &next
	}
	return p
}

// GetCompany returns one company of the viewer's store.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Service) GetCompany(ctx context.Context, id string) (Company, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Company{}, err
	}
	c, err := s.loadCompany(ctx, s.reader(ctx), id)
	if err != nil {
		return Company{}, err
	}
	return companyView(c, c.Edges.Store), nil
}

// loadCompany reads a company with its store, scoped by the data layer to the viewer's store.
func (s *Service) loadCompany(ctx context.Context, client *ent.Client, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	c, err := client.Company.Query().Where(company.ID(id)).Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "company")
	}
	if c.Edges.Store, err = s.storeByID(ctx, client, c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// CompanyInput creates a company from the admin side.
type CompanyInput struct {
	StoreID            string
	Name               string
	PlatformCompanyGID string
	PaymentTerms       string
	CreditLimit        string
}

// CreateCompany creates a company on credit terms in a store (admin side).
//
// Errors: not_found (store), validation_failed, invalid_amount, limit_below_zero.
func (s *Service) CreateCompany(ctx context.Context, in CompanyInput) (Company, error) {
	var out Company
	err := s.inTx(ctx, func(tx *ent.Tx) error {
		var gid *string
		if in.PlatformCompanyGID != "" {
			gid = &in.PlatformCompanyGID
		}
		c, st, err := s.createCompany(ctx, tx, in.StoreID, in.Name, gid, in.PaymentTerms, in.CreditLimit)
		if err != nil {
			return err
		}
		out = companyView(c, st)
		return nil
	})
	return out, err
}

func (s *Service) createCompany(ctx context.Context, tx *ent.Tx, storeID, name string, gid *string, terms, limit string) (*ent.Company, *ent.Store, error) {
	st, err := tx.Store.Get(ctx, storeID)
	if err != nil {
		return nil, nil, notFoundOr(err, "store")
	}
	name = strings.TrimSpace(name)
	if err := checkField(name, "name", 500); err != nil {
		return nil, nil, err
	}
	if gid != nil && !companyGIDPattern.MatchString(*gid) {
		return nil, nil, ParamErrorf(CodeValidationFailed, "platform_company_gid", "platform_company_gid must look like gid://platform/Company/123")
	}
	days, err := ParsePaymentTerms(terms, "payment_terms")
	if err != nil {
		return nil, nil, err
	}
	amount, err := parseCreditLimit(limit, st.Currency)
	if err != nil {
		return nil, nil, err
	}
	now := s.Now()
	c, err := tx.Company.Create().
		SetStoreID(st.ID).
		SetName(name).
		SetNillablePlatformCompanyGid(gid).
		SetPaymentTermsDays(days).
		SetCreditLimit(amount).
		SetOutstanding(decimal.Zero).
		SetUnappliedCredit(decimal.Zero).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
	if err != nil {
		return nil, nil, err
	}
	return c, st, nil
}

// parseCreditLimit reads a credit limit: a decimal amount of zero or more.
//
// Errors: invalid_amount, limit_below_zero.
func parseCreditLimit(s, currency string) (decimal.Decimal, error) {
	amount, err := ParseAmount(s, currency, "amount")
	if err != nil {
		return decimal.Decimal{}, err
	}
	if amount.IsNegative() {
		return decimal.Decimal{}, ParamErrorf(CodeLimitBelowZero, "amount", "credit limit must be zero or greater")
	}
	return amount, nil
}
