package credit

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ids"
)

// Companies on credit terms: their figures, their listing and reading, creating one (admin
// side, or by approving an application) and changing its credit limit.

// Company statuses, derived from the hold (contract §5).
const (
	StatusApproved = "approved"
	StatusOnHold   = "on_hold"
)

// Company is a company as the API shows it.
type Company struct {
	ID                 string    `json:"id"`
	Name               string    `json:"name"`
	PlatformCompanyGID *string   `json:"platform_company_gid"`
	Status             string    `json:"status"`
	PaymentTerms       string    `json:"payment_terms"`
	CreditLimit        Money     `json:"credit_limit"`
	Outstanding        Money     `json:"outstanding"`
	AvailableCredit    Money     `json:"available_credit"`
	Hold               *Hold     `json:"hold"`
	UpdatedAt          Timestamp `json:"updated_at"`

	// ledgerSeq is the sequence number of the company's last ledger entry when the view was
	// made, so that Ledger.FirstPagesOf need not read the company again.
	ledgerSeq int64
}

// companyViewColumns are the columns companyView reads: a list selects only these (each column
// of each row is a few calls into SQLite's C library, and timestamps are parsed).
var companyViewColumns = []string{
	company.FieldID, company.FieldName, company.FieldPlatformCompanyGid, company.FieldPaymentTermsDays,
	company.FieldCreditLimit, company.FieldOutstanding, company.FieldLedgerSeq,
	company.FieldHoldKind, company.FieldHoldNote, company.FieldHoldPlacedAt, company.FieldHoldPlacedBy,
	company.FieldHoldOrderGid, company.FieldHoldDueAt, company.FieldUpdatedAt,
}

func companyView(c *ent.Company, st *ent.Store) Company {
	cur := st.Currency
	v := Company{
		ID:                 c.ID,
		Name:               c.Name,
		PlatformCompanyGID: c.PlatformCompanyGid,
		Status:             StatusApproved,
		PaymentTerms:       PaymentTerms(c.PaymentTermsDays),
		CreditLimit:        NewMoney(c.CreditLimit, cur),
		Outstanding:        NewMoney(c.Outstanding, cur),
		AvailableCredit:    availableMoney(c.CreditLimit, c.Outstanding, st.BufferPercent, cur),
		UpdatedAt:          At(c.UpdatedAt),
		ledgerSeq:          c.LedgerSeq,
	}
	if c.HoldKind != nil {
		v.Status = StatusOnHold
		v.Hold = holdView(c)
	}
	return v
}

var companyGIDPattern = regexp.MustCompile(`^gid://platform/Company/[0-9]{1,20}$`)

// CompanyListParams are the inputs of Companies.List.
type CompanyListParams struct {
	ListParams
	// Status is "", "approved" or "on_hold".
	Status string
	// UpdatedSince keeps companies updated at or after this instant.
	UpdatedSince *Timestamp
	// Order is the ordering (contract §6, 2026-11-27); the zero value is updated_at ascending.
	Order CompanyOrder
	// Search keeps companies whose name contains it, ignoring case and accents (NameKey); nil
	// searches nothing. It has 1 to 100 characters (REST's q, GraphQL's search).
	Search *string
	// ByName orders the list by name (Order's name ordering) when Order is the default:
	// people look a company up by name, while a sync follows updates.
	ByName bool
}

// List lists the viewer's store's companies in p's ordering (by default updated_at
// then ID, ascending), filtered by status, update time and search. Each ordering is a keyset
// read along an index, one statement per page (companyorder.go).
//
// Errors: insufficient_scope, invalid_parameter (status, limit, cursor — also one of another
// ordering or other filters —, order, q for a search of the wrong length).
func (s *Companies) List(ctx context.Context, p CompanyListParams) (Page[Company], error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Page[Company]{}, err
	}
	n, err := pageSize(p.Limit)
	if err != nil {
		return Page[Company]{}, err
	}
	order := p.Order
	if p.ByName && order.isDefault() {
		order = CompanyOrder{Field: OrderName}
	}
	if err := order.check(); err != nil {
		return Page[Company]{}, err
	}
	if err := CheckCompanySearch(p.Search); err != nil {
		return Page[Company]{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Page[Company]{}, err
	}
	q := s.db.Reader(ctx).Company.Query()
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
	// The searches and the orderings extend the list's name only when used, so that the
	// cursors of the sync order stay as they were.
	if p.Search != nil {
		q.Where(nameSearch(s.db, st.ID, NameKey(*p.Search)))
		list += "|q=" + strconv.Quote(*p.Search)
	}
	if !order.isDefault() {
		list += "|order=" + order.String()
	}
	var after *cursorPayload
	if p.Cursor != "" {
		c, err := decodeCursor(st.CursorSecret, list, p.Cursor)
		if err != nil {
			return Page[Company]{}, err
		}
		after = &c
	}
	position := companyKeyset(s.db, q, order, list, after)
	columns := packedCompanyColumns
	if companyOrderColumns[order.Field] != "" {
		columns = packedKeyedCompanyColumns
	}
	q.Limit(n + 1)
	var rows []*ent.Company
	err = s.auth.confirmedRead(ctx, func(confirm condition) (bool, error) {
		var err error
		rows, err = s.db.ReadCompanies(ctx, q.Clone().Where(confirm), columns)
		return len(rows) > 0, err
	})
	if err != nil {
		return Page[Company]{}, err
	}
	return makePage(rows, n, func(c *ent.Company) Company { return companyView(c, st) },
		func(c *ent.Company) string { return encodeCursor(st.CursorSecret, position(c)) }), nil
}

// Get returns one company of the viewer's store.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Companies) Get(ctx context.Context, id string) (Company, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Company{}, err
	}
	if !ids.HasPrefix(id, "co") {
		return Company{}, errNotFound("company")
	}
	client := s.db.Reader(ctx)
	var rows []*ent.Company
	err := s.auth.confirmedRead(ctx, func(confirm condition) (bool, error) {
		var err error
		rows, err = s.db.ReadCompanies(ctx, client.Company.Query().Where(company.ID(id), confirm), packedCompanyColumns)
		return len(rows) > 0, err
	})
	if err != nil {
		return Company{}, err
	}
	if len(rows) == 0 {
		return Company{}, errNotFound("company")
	}
	st, err := s.stores.storeByID(ctx, client, rows[0].StoreID)
	if err != nil {
		return Company{}, err
	}
	return companyView(rows[0], st), nil
}

// loadCompany reads a company with its store, scoped by the data layer to the viewer's store.
//
// Errors: not_found.
func (s *companyStore) loadCompany(ctx context.Context, client *ent.Client, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	var c *ent.Company
	err := s.auth.confirmedRead(ctx, func(confirm condition) (bool, error) {
		var err error
		c, err = client.Company.Query().Where(company.ID(id), confirm).Only(ctx)
		if ent.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, errNotFound("company")
	}
	if c.Edges.Store, err = s.stores.storeByID(ctx, client, c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// CompanyInput creates a company from the admin side.
type CompanyInput struct {
	Name               string
	PlatformCompanyGID string
	PaymentTerms       string
	CreditLimit        string
}

// Create creates a company on credit terms in the staff member's store.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed,
// invalid_amount, limit_below_zero.
func (s *Companies) Create(ctx context.Context, in CompanyInput) (Company, error) {
	if _, err := requireStaff(ctx); err != nil {
		return Company{}, err
	}
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return Company{}, err
	}
	var out Company
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		var gid *string
		if in.PlatformCompanyGID != "" {
			gid = &in.PlatformCompanyGID
		}
		c, err := s.companies.createCompany(ctx, tx, st, in.Name, gid, in.PaymentTerms, in.CreditLimit)
		if err != nil {
			return err
		}
		out = companyView(c, st)
		err = s.events.emit(ctx, tx, st.ID, EventTypeCompanyCreated, out, nil)
		return err
	})
	return out, s.companies.nameGIDHolder(ctx, err)
}

// createCompany creates a company in st within tx. The caller emits its company.created
// event, after any other row it changes (the event must be the transaction's last lock).
//
// Errors: validation_failed (a platform company GID another company of the store has, too),
// invalid_amount, limit_below_zero.
func (s *companyStore) createCompany(ctx context.Context, tx *ent.Tx, st *ent.Store, name string, gid *string, terms, limit string) (*ent.Company, error) {
	name = strings.TrimSpace(name)
	days, amount, errs := checkCompany(name, gid, terms, limit, st.Currency)
	if len(errs) > 0 {
		return nil, errs[0]
	}
	now := s.clock.Now()
	keys := OrderKeysOf(name, amount, decimal.Zero, st.BufferPercent, st.Currency)
	c, err := tx.Company.Create().
		SetStoreID(st.ID).
		SetName(name).
		SetNameKey(keys.Name).
		SetOutstandingKey(keys.Outstanding).
		SetCreditLimitKey(keys.CreditLimit).
		SetAvailableKey(keys.Available).
		SetUtilizationKey(keys.Utilization).
		SetNillablePlatformCompanyGid(gid).
		SetPaymentTermsDays(days).
		SetCreditLimit(amount).
		SetOutstanding(decimal.Zero).
		SetUnappliedCredit(decimal.Zero).
		SetCreatedAt(now).
		SetUpdatedAt(now).
		Save(ctx)
	if s.db.ViolatedIndex(err) == companyGIDIndex {
		// Contract §13: the platform's deliveries name a company by this GID, so it names
		// one; the index decides, also against a transaction that committed meanwhile.
		return nil, errCompanyGIDTaken(*gid)
	}
	if err != nil {
		return nil, err
	}
	c.Edges.Store = st
	return c, nil
}

// companyTermsErrors checks the terms a new company is created with (by the API, or by an
// approval), each on its own, in the order createCompany refuses them: the platform company
// GID, the payment terms, then the credit limit (param "amount"). It returns every refusal,
// for a form to show each beside its field (ApprovalErrors), and the values read.
func companyTermsErrors(gid *string, terms, limit, currency string) (days int, amount decimal.Decimal, errs []error) {
	if gid != nil && !companyGIDPattern.MatchString(*gid) {
		errs = append(errs, ParamErrorf(CodeValidationFailed, "platform_company_gid", "platform_company_gid must look like gid://platform/Company/123"))
	}
	days, err := ParsePaymentTerms(terms, "payment_terms")
	if err != nil {
		errs = append(errs, err)
	}
	amount, err = parseCreditLimit(limit, currency)
	if err != nil {
		errs = append(errs, err)
	}
	return days, amount, errs
}

// companyGIDIndex is the unique index of a store's platform company GIDs.
const companyGIDIndex = "company_store_id_platform_company_gid"

// errCompanyGIDTaken refuses a second company with a platform company GID of the store. The
// unique index finds it, inside a transaction that is then over (PostgreSQL aborts it), so the
// holder is named afterwards, by nameGIDHolder.
func errCompanyGIDTaken(gid string) error {
	return &gidTakenError{refusal: ParamErrorf(CodeValidationFailed, "platform_company_gid",
		"platform_company_gid %s already belongs to a company of this store", gid), gid: gid}
}

// gidTakenError is errCompanyGIDTaken's error until nameGIDHolder names the company; it is
// its refusal (errors.As finds the *Error) wherever it is not named.
type gidTakenError struct {
	refusal *Error
	gid     string
}

func (e *gidTakenError) Error() string { return e.refusal.Error() }
func (e *gidTakenError) Unwrap() error { return e.refusal }

// nameGIDHolder turns a refusal of a taken platform company GID into one that says which
// company has it, so that whoever typed it can go and look: a GID is the platform's name of one
// company, and a second company claiming it is most often the same buyer entered twice. It reads
// after the transaction that was refused; any other error is returned as it is.
func (s *companyStore) nameGIDHolder(ctx context.Context, err error) error {
	var taken *gidTakenError
	if !errors.As(err, &taken) {
		return err
	}
	holder, qerr := s.db.Ent().Company.Query().Where(company.PlatformCompanyGid(taken.gid)).Only(ctx)
	if qerr != nil {
		return taken.refusal
	}
	return ParamErrorf(CodeValidationFailed, "platform_company_gid",
		"platform_company_gid %s already belongs to %s (%s)", taken.gid, holder.Name, holder.ID)
}

// CreditLimitInput is the body of PUT /companies/{id}/credit-limit.
type CreditLimitInput struct {
	CompanyID string
	Amount    AmountInput
	Reason    *string
	Currency  *string
}

// CreditLimitResult is what a limit change returns.
type CreditLimitResult struct {
	Company             Company `json:"company"`
	PreviousCreditLimit Money   `json:"previous_credit_limit"`
}

// SetCreditLimit replaces a company's credit limit, attributed to the viewer. A limit equal to
// the current one answers as a change would and goes on the timeline, but appends no event
// and leaves updated_at alone.
//
// Errors: insufficient_scope, not_found, validation_failed (reason), invalid_amount,
// currency_mismatch, limit_below_zero.
func (s *Companies) SetCreditLimit(ctx context.Context, in CreditLimitInput) (CreditLimitResult, error) {
	var out CreditLimitResult
	err := s.companies.writeCompany(ctx, in.CompanyID, func(tx *ent.Tx, c *ent.Company) error {
		cur := c.Edges.Store.Currency
		amount, errs := checkCreditLimit(in, cur)
		if len(errs) > 0 {
			return errs[0]
		}
		previous := c.CreditLimit
		// Setting the limit it already has changes nothing a client reads: no event, and
		// updated_at stays (contract §11, 2026-11-24). It is still a staff or key action, so it
		// goes on the timeline.
		changed := !amount.Equal(previous)
		if changed {
			var err error
			c, err = saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) { u.SetCreditLimit(amount).SetUpdatedAt(s.clock.Now()) })
			if err != nil {
				return err
			}
		}
		if err := s.events.recordEvent(ctx, tx, c, TimelineCreditLimitChanged, map[string]any{
			"previous_credit_limit": NewMoney(previous, cur),
			"credit_limit":          NewMoney(amount, cur),
			"reason":                in.Reason,
		}); err != nil {
			return err
		}
		out = CreditLimitResult{Company: companyView(c, c.Edges.Store), PreviousCreditLimit: NewMoney(previous, cur)}
		if !changed {
			return nil
		}
		if err := s.events.emit(ctx, tx, c.StoreID, EventTypeCompanyCreditLimitChanged, out.Company,
			map[string]any{"credit_limit": out.PreviousCreditLimit}); err != nil {
			return err
		}
		return nil
	})
	return out, err
}
