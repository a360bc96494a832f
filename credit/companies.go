package credit

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"entgo.io/ent/dialect/sql"
	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/predicate"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
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
	// made, so that LatestLedgerEntriesOf need not read the company again.
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

var (
	companyGIDPattern = regexp.MustCompile(`^gid://platform/Company/[0-9]{1,20}$`)
	paymentTerms      = regexp.MustCompile(`^NET_([0-9]{1,3})$`)
)

// PaymentTerms formats a number of days as the API's NET_<days> code.
func PaymentTerms(days int) string { return fmt.Sprintf("NET_%d", days) }

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
	// Order is the ordering (contract §6, 2026-11-27); the zero value is updated_at ascending.
	Order CompanyOrder
	// Search keeps companies whose name contains it, ignoring case and accents (NameKey); nil
	// searches nothing. It has 1 to 100 characters (REST's q, GraphQL's search).
	Search *string
	// ByName orders the list by name (Order's name ordering) when Order is the default:
	// people look a company up by name, while a sync follows updates.
	ByName bool
}

// ListCompanies lists the viewer's store's companies in p's ordering (by default updated_at
// then ID, ascending), filtered by status, update time and search. Each ordering is a keyset
// read along an index, one statement per page (companyorder.go).
//
// Errors: insufficient_scope, invalid_parameter (status, limit, cursor — also one of another
// ordering or other filters —, order, q for a search of the wrong length).
func (s *Service) ListCompanies(ctx context.Context, p CompanyListParams) (Page[Company], error) {
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
	// The searches and the orderings extend the list's name only when used, so that the
	// cursors of the sync order stay as they were.
	if p.Search != nil {
		q.Where(nameSearch(st.ID, NameKey(*p.Search)))
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
	position := companyKeyset(q, order, list, after)
	read := readCompanies
	if companyOrderColumns[order.Field] != "" {
		read = readKeyedCompanies
	}
	q.Limit(n + 1)
	var rows []*ent.Company
	err = s.confirmedRead(ctx, func(confirm func(*sql.Selector)) (bool, error) {
		var err error
		rows, err = read(ctx, q.Clone().Where(confirm))
		return len(rows) > 0, err
	})
	if err != nil {
		return Page[Company]{}, err
	}
	return makePage(rows, n, func(c *ent.Company) Company { return companyView(c, st) },
		func(c *ent.Company) string { return encodeCursor(st.CursorSecret, position(c)) }), nil
}

// GetCompany returns one company of the viewer's store.
//
// Errors: insufficient_scope, not_found (unknown ID or another store's).
func (s *Service) GetCompany(ctx context.Context, id string) (Company, error) {
	if err := requireScope(ctx, ScopeReadCredit); err != nil {
		return Company{}, err
	}
	if !ids.HasPrefix(id, "co") {
		return Company{}, errNotFound("company")
	}
	client := s.reader(ctx)
	var rows []*ent.Company
	err := s.confirmedRead(ctx, func(confirm func(*sql.Selector)) (bool, error) {
		var err error
		rows, err = readCompanies(ctx, client.Company.Query().Where(company.ID(id), confirm))
		return len(rows) > 0, err
	})
	if err != nil {
		return Company{}, err
	}
	if len(rows) == 0 {
		return Company{}, errNotFound("company")
	}
	st, err := s.storeByID(ctx, client, rows[0].StoreID)
	if err != nil {
		return Company{}, err
	}
	return companyView(rows[0], st), nil
}

// loadCompany reads a company with its store, scoped by the data layer to the viewer's store.
//
// Errors: not_found.
func (s *Service) loadCompany(ctx context.Context, client *ent.Client, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	var c *ent.Company
	err := s.confirmedRead(ctx, func(confirm func(*sql.Selector)) (bool, error) {
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
	if c.Edges.Store, err = s.storeByID(ctx, client, c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// lockCompany reads a company with its store for update, so that writes to one company take
// turns: its ledger sequence numbers then follow commit order.
//
// Where the database locks rows (PostgreSQL) it first locks the company's store row, which
// every write locks anyway to number its event (database.InsertNumbered). All writers of a
// store then take their locks in one order, the store before any company, so a transaction
// that writes to several companies (GraphQL mutations under one Idempotency-Key) cannot close
// a cycle with another write: it waits instead of deadlocking. Both locks are one statement:
// the company's SELECT … FOR UPDATE has the store's lock as a condition that names no column
// of the company (an EXISTS … FOR UPDATE), which PostgreSQL evaluates once, as an InitPlan,
// before it reads and locks the company's row.
//
// Errors: not_found.
func (s *Service) lockCompany(ctx context.Context, tx *ent.Tx, id string) (*ent.Company, error) {
	if !ids.HasPrefix(id, "co") {
		return nil, errNotFound("company")
	}
	// Every column but the sort keys, which a write never reads (lockedCompanyColumns).
	q := tx.Company.Query().Select(lockedCompanyColumns...).Where(company.ID(id), s.db.ForUpdate)
	if s.db.LocksRows() {
		q.Where(storeLockedFirst(ctx, id))
	}
	c, err := q.Only(ctx)
	if err != nil {
		return nil, notFoundOr(err, "company")
	}
	if c.Edges.Store, err = s.storeByID(ctx, tx.Client(), c.StoreID); err != nil {
		return nil, err
	}
	return c, nil
}

// storeLockedFirst is lockCompany's condition that locks the store's row before the company's
// (see there): the viewer's store, or for system work (the overdue sweep) the store the
// company names, read in the same statement. A store's viewer never locks another store's row,
// even when naming another store's company (which the data layer then does not find).
func storeLockedFirst(ctx context.Context, companyID string) predicate.Company {
	v, _ := tenant.FromContext(ctx)
	return func(sel *sql.Selector) {
		// OF locked_store: only the store's row, whatever else the subquery reads.
		stores := sql.Table(store.Table).As("locked_store")
		lock := sql.Select(stores.C(store.FieldID)).From(stores).ForUpdate(sql.WithLockTables("locked_store"))
		if v.StoreID != "" {
			lock.Where(sql.EQ(stores.C(store.FieldID), v.StoreID))
		} else {
			named := sql.Table(company.Table).As("named_company")
			lock.Where(sql.EQ(stores.C(store.FieldID),
				sql.Select(named.C(company.FieldStoreID)).From(named).Where(sql.EQ(named.C(company.FieldID), companyID))))
		}
		sel.Where(sql.Exists(lock))
	}
}

// writeCompany runs one of the API's writes to a company (adjustment, limit change, hold
// placed or lifted): it checks write_credit, then runs fn in one transaction with the company
// locked and read with its store, so that the write, the company's new figures and its
// timeline event commit together and writes to one company take turns.
//
// Errors: insufficient_scope, not_found, and fn's.
func (s *Service) writeCompany(ctx context.Context, companyID string, fn func(tx *ent.Tx, c *ent.Company) error) error {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *ent.Tx) error {
		c, err := s.lockCompany(ctx, tx, companyID)
		if err != nil {
			return err
		}
		return fn(tx, c)
	})
}

// saveCompany runs an update of a company read with its store and returns the updated row
// with the same store: an update loads no edges, and every view of a company needs its
// store's currency and buffer.
//
// c is the company as read under its lock (lockCompany) and as returned by earlier updates
// of the same transaction, so the updated row is c with the update's values: it is made here
// and the update runs as one UPDATE statement, where ent's UpdateOne would read the row back
// with a second. An update of a field appliedCompany does not know is read back.
func saveCompany(ctx context.Context, c *ent.Company, update func(u *ent.CompanyUpdateOne)) (*ent.Company, error) {
	st := c.Edges.Store
	u := c.Update()
	update(u)
	keepUpdatedAtMonotonic(c, u.Mutation())
	m := u.Mutation()
	// The sort keys follow the figures in the same statement (orderkeys.go).
	limit, limitSet := m.CreditLimit()
	outstanding, outstandingSet := m.Outstanding()
	if limitSet || outstandingSet {
		if !limitSet {
			limit = c.CreditLimit
		}
		if !outstandingSet {
			outstanding = c.Outstanding
		}
		setFigureKeys(u, c, limit, outstanding)
	}
	next, ok := appliedCompany(c, m)
	if !ok {
		updated, err := u.Save(ctx)
		if err != nil {
			return nil, err
		}
		updated.Edges.Store = st
		return updated, nil
	}
	// The same mutation, hooks (the tenant's store) included, as an update by ID.
	m.SetOp(ent.OpUpdate)
	m.Where(company.ID(c.ID))
	v, err := m.Client().Mutate(ctx, m)
	if err != nil {
		return nil, err
	}
	if n, _ := v.(int); n != 1 {
		return nil, errNotFound("company")
	}
	return next, nil
}

// keepUpdatedAtMonotonic keeps a company's updated_at from decreasing (contract §11),
// whatever the clock of the process writing (instances' clocks differ by a little; a sweep as
// of another moment does not stamp it): a sync that keeps the later copy keeps the last one.
func keepUpdatedAtMonotonic(c *ent.Company, m *ent.CompanyMutation) {
	if t, ok := m.UpdatedAt(); ok && t.Before(c.UpdatedAt) {
		m.SetUpdatedAt(c.UpdatedAt)
	}
}

// appliedCompany returns c with the values m sets and clears, and false when m does anything
// else (adds to a number, sets a field not listed in setCompanyField).
func appliedCompany(c *ent.Company, m *ent.CompanyMutation) (*ent.Company, bool) {
	if len(m.AddedFields()) > 0 {
		return nil, false
	}
	next := *c
	for _, name := range m.ClearedFields() {
		if !setCompanyField(&next, name, nil) {
			return nil, false
		}
	}
	for _, name := range m.Fields() {
		v, _ := m.Field(name)
		if !setCompanyField(&next, name, v) {
			return nil, false
		}
	}
	return &next, true
}

// setCompanyField sets one field of c as an update writes it (nil clears a nullable field),
// and reports whether it knows the field and the value's type.
func setCompanyField(c *ent.Company, name string, v ent.Value) bool {
	ok := true
	switch name {
	case company.FieldCreditLimit:
		c.CreditLimit, ok = v.(decimal.Decimal)
	case company.FieldOutstanding:
		c.Outstanding, ok = v.(decimal.Decimal)
	case company.FieldUnappliedCredit:
		c.UnappliedCredit, ok = v.(decimal.Decimal)
	case company.FieldOutstandingKey:
		c.OutstandingKey, ok = v.(string)
	case company.FieldCreditLimitKey:
		c.CreditLimitKey, ok = v.(string)
	case company.FieldAvailableKey:
		c.AvailableKey, ok = v.(string)
	case company.FieldUtilizationKey:
		c.UtilizationKey, ok = v.(string)
	case company.FieldLedgerSeq:
		c.LedgerSeq, ok = v.(int64)
	case company.FieldUpdatedAt:
		c.UpdatedAt, ok = v.(time.Time)
	case company.FieldHoldKind:
		c.HoldKind, ok = nullable[company.HoldKind](v)
	case company.FieldHoldNote:
		c.HoldNote, ok = nullable[string](v)
	case company.FieldHoldPlacedBy:
		c.HoldPlacedBy, ok = nullable[string](v)
	case company.FieldHoldOrderGid:
		c.HoldOrderGid, ok = nullable[string](v)
	case company.FieldHoldPlacedAt:
		c.HoldPlacedAt, ok = nullable[time.Time](v)
	case company.FieldHoldDueAt:
		c.HoldDueAt, ok = nullable[time.Time](v)
	default:
		return false
	}
	return ok
}

// nullable is a nullable field's value: nil for a cleared one.
func nullable[T any](v ent.Value) (*T, bool) {
	if v == nil {
		return nil, true
	}
	t, ok := v.(T)
	return &t, ok
}

// CompanyInput creates a company from the admin side.
type CompanyInput struct {
	Name               string
	PlatformCompanyGID string
	PaymentTerms       string
	CreditLimit        string
}

// CreateCompany creates a company on credit terms in the staff member's store.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed,
// invalid_amount, limit_below_zero.
func (s *Service) CreateCompany(ctx context.Context, in CompanyInput) (Company, error) {
	if _, err := requireStaff(ctx); err != nil {
		return Company{}, err
	}
	st, err := s.viewerStore(ctx)
	if err != nil {
		return Company{}, err
	}
	var out Company
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		var gid *string
		if in.PlatformCompanyGID != "" {
			gid = &in.PlatformCompanyGID
		}
		c, err := s.createCompany(ctx, tx, st, in.Name, gid, in.PaymentTerms, in.CreditLimit)
		if err != nil {
			return err
		}
		out = companyView(c, st)
		err = s.emit(ctx, tx, st.ID, EventTypeCompanyCreated, out, nil)
		return err
	})
	return out, err
}

// createCompany creates a company in st within tx. The caller emits its company.created
// event, after any other row it changes (the event must be the transaction's last lock).
//
// Errors: validation_failed (a platform company GID another company of the store has, too),
// invalid_amount, limit_below_zero.
func (s *Service) createCompany(ctx context.Context, tx *ent.Tx, st *ent.Store, name string, gid *string, terms, limit string) (*ent.Company, error) {
	name = strings.TrimSpace(name)
	if err := checkField(name, "name", 500); err != nil {
		return nil, err
	}
	if gid != nil && !companyGIDPattern.MatchString(*gid) {
		return nil, ParamErrorf(CodeValidationFailed, "platform_company_gid", "platform_company_gid must look like gid://platform/Company/123")
	}
	days, err := ParsePaymentTerms(terms, "payment_terms")
	if err != nil {
		return nil, err
	}
	amount, err := parseCreditLimit(limit, st.Currency)
	if err != nil {
		return nil, err
	}
	now := s.Now()
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

// companyGIDIndex is the unique index of a store's platform company GIDs.
const companyGIDIndex = "company_store_id_platform_company_gid"

// errCompanyGIDTaken refuses a second company with a platform company GID of the store.
func errCompanyGIDTaken(gid string) error {
	return ParamErrorf(CodeValidationFailed, "platform_company_gid", "platform_company_gid %s already belongs to a company of this store", gid)
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
func (s *Service) SetCreditLimit(ctx context.Context, in CreditLimitInput) (CreditLimitResult, error) {
	var out CreditLimitResult
	err := s.writeCompany(ctx, in.CompanyID, func(tx *ent.Tx, c *ent.Company) error {
		cur := c.Edges.Store.Currency
		amount, err := requiredAmount(in.Amount, in.Currency, cur)
		if err != nil {
			return err
		}
		if amount.IsNegative() {
			return errLimitBelowZero
		}
		if in.Reason != nil {
			if err := checkText(*in.Reason, "reason"); err != nil {
				return err
			}
		}
		previous := c.CreditLimit
		// Setting the limit it already has changes nothing a client reads: no event, and
		// updated_at stays (contract §11, 2026-11-24). It is still a staff or key action, so it
		// goes on the timeline.
		changed := !amount.Equal(previous)
		if changed {
			c, err = saveCompany(ctx, c, func(u *ent.CompanyUpdateOne) { u.SetCreditLimit(amount).SetUpdatedAt(s.Now()) })
			if err != nil {
				return err
			}
		}
		if err := s.recordEvent(ctx, tx, c, EventCreditLimitChanged, map[string]any{
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
		if err := s.emit(ctx, tx, c.StoreID, EventTypeCompanyCreditLimitChanged, out.Company,
			map[string]any{"credit_limit": out.PreviousCreditLimit}); err != nil {
			return err
		}
		return nil
	})
	return out, err
}
