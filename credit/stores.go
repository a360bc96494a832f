package credit

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/apikey"
	"github.com/creditd/creditd/ent/application"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/ledgerentry"
	"github.com/creditd/creditd/ent/platformdelivery"
	"github.com/creditd/creditd/ent/staffmember"
	"github.com/creditd/creditd/ent/store"
	"github.com/creditd/creditd/ent/webhookendpoint"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// StoreInfo describes a store.
type StoreInfo struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Currency      string `json:"currency"`
	BufferPercent int    `json:"buffer_percent"`
	// Locale is how the store's staff write numbers (see ParseLocalAmount).
	Locale    string    `json:"locale"`
	CreatedAt Timestamp `json:"created_at"`
}

// DefaultBufferPercent is the safety buffer a store gets unless told otherwise (contract §5).
const DefaultBufferPercent = 5

// Create creates a store with its currency and safety buffer, and optionally its locale
// (how its staff write numbers, "en" unless given; like the currency, it is set once). Creating
// a store is system work: no store's staff exists before it.
//
// Errors: validation_failed (name, currency, buffer_percent, locale).
func (s *Stores) Create(ctx context.Context, name, currency string, bufferPercent int, locale ...string) (StoreInfo, error) {
	name = strings.TrimSpace(name)
	if err := checkField(name, "name", 200); err != nil {
		return StoreInfo{}, err
	}
	if _, ok := MinorDigits(currency); !ok {
		return StoreInfo{}, ParamErrorf(CodeValidationFailed, "currency", "currency must be an ISO 4217 code the service knows, such as EUR, USD, JPY or KWD")
	}
	if bufferPercent < 0 || bufferPercent > 50 {
		return StoreInfo{}, ParamErrorf(CodeValidationFailed, "buffer_percent", "buffer percent must be between 0 and 50")
	}
	loc := DefaultLocale
	if len(locale) > 0 && locale[0] != "" {
		loc = locale[0]
	}
	if !localePattern.MatchString(loc) {
		return StoreInfo{}, ParamErrorf(CodeValidationFailed, "locale", "locale must be a language tag such as en, de or de-AT")
	}
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return StoreInfo{}, err
	}
	var out StoreInfo
	err := s.db.InTx(tenant.System(ctx), func(tx *ent.Tx) error {
		st, err := tx.Store.Create().
			SetName(name).
			SetCurrency(currency).
			SetBufferPercent(bufferPercent).
			SetLocale(loc).
			SetCursorSecret(secret).
			SetCreatedAt(s.clock.Now()).
			Save(tenant.System(ctx))
		if err != nil {
			return err
		}
		out = storeInfo(st)
		return nil
	})
	return out, err
}

// List lists every store, oldest first, for the operator of the service (the command
// line's `store list`): system work across stores.
func (s *Stores) List(ctx context.Context) ([]StoreInfo, error) {
	rows, err := s.db.Ent().Store.Query().Order(ent.Asc(store.FieldCreatedAt), ent.Asc(store.FieldID)).All(tenant.System(ctx))
	if err != nil {
		return nil, err
	}
	out := make([]StoreInfo, len(rows))
	for i, st := range rows {
		out[i] = storeInfo(st)
	}
	return out, nil
}

func storeInfo(st *ent.Store) StoreInfo {
	return StoreInfo{ID: st.ID, Name: st.Name, Currency: st.Currency, BufferPercent: st.BufferPercent, Locale: st.Locale, CreatedAt: At(st.CreatedAt)}
}

// OwnerOf returns the ID of the store that owns a record, named by its ID alone: a store
// (itself), a company, a ledger entry, an application, an API key, a staff member, a webhook endpoint or a platform delivery. The admin command line
// names records without their store and then acts as staff of the store it finds, so that the
// data layer scopes the operation like any other; this look-up is the one piece of system work
// in that.
//
// Errors: not_found.
func (s *Stores) OwnerOf(ctx context.Context, id string) (string, error) {
	sys := tenant.System(ctx)
	var (
		storeID string
		err     error
		what    string
	)
	switch {
	case ids.HasPrefix(id, "st"):
		what = "store"
		storeID, err = s.db.Ent().Store.Query().Where(store.ID(id)).OnlyID(sys)
	case ids.HasPrefix(id, "co"):
		what = "company"
		storeID, err = s.db.Ent().Company.Query().Where(company.ID(id)).Select(company.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "le"):
		what = "ledger entry"
		storeID, err = s.db.Ent().LedgerEntry.Query().Where(ledgerentry.ID(id)).Select(ledgerentry.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "app"):
		what = "application"
		storeID, err = s.db.Ent().Application.Query().Where(application.ID(id)).Select(application.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "key"):
		what = "key"
		storeID, err = s.db.Ent().APIKey.Query().Where(apikey.ID(id)).Select(apikey.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "stf"):
		what = "staff member"
		storeID, err = s.db.Ent().StaffMember.Query().Where(staffmember.ID(id)).Select(staffmember.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "we"):
		what = "webhook endpoint"
		storeID, err = s.db.Ent().WebhookEndpoint.Query().Where(webhookendpoint.ID(id)).Select(webhookendpoint.FieldStoreID).String(sys)
	case ids.HasPrefix(id, "pd"):
		what = "platform delivery"
		storeID, err = s.db.Ent().PlatformDelivery.Query().Where(platformdelivery.ID(id)).Select(platformdelivery.FieldStoreID).String(sys)
	default:
		return "", Errorf(CodeNotFound, "no record has the ID %q", id)
	}
	if err != nil {
		return "", notFoundOr(err, what)
	}
	return storeID, nil
}

// Current describes the viewer's own store, for a page that names it.
//
// Errors: unauthenticated without a viewer of a store, not_found (store).
func (s *Stores) Current(ctx context.Context) (StoreInfo, error) {
	st, err := s.stores.viewerStore(ctx)
	if err != nil {
		return StoreInfo{}, err
	}
	return storeInfo(st), nil
}

// viewerStore loads the store of the request's viewer.
//
// Errors: unauthenticated without a viewer of a store, not_found when the store does not exist
// (a staff viewer made up on the command line).
func (s *storeCache) viewerStore(ctx context.Context) (*ent.Store, error) {
	v, ok := tenant.FromContext(ctx)
	if !ok || v.StoreID == "" {
		return nil, errNoViewer
	}
	st, err := s.storeByID(ctx, s.db.Ent(), v.StoreID)
	if err != nil {
		return nil, fmt.Errorf("load viewer's store: %w", notFoundOr(err, "store"))
	}
	return st, nil
}

// storeByID returns a store row, from the cache when it was read before. client is the
// service's client or a transaction's: committed rows are read outside it and cached, and a
// store only the transaction sees (it created it) is read through it and not cached, since the
// transaction may yet roll back. Callers pass the ID of the viewer's store or of a row already
// scoped to it, so the cache never crosses tenants.
func (s *storeCache) storeByID(ctx context.Context, client *ent.Client, id string) (*ent.Store, error) {
	if st, ok := s.stores.Load(id); ok {
		return st.(*ent.Store), nil
	}
	st, err := s.db.Ent().Store.Get(ctx, id)
	if ent.IsNotFound(err) && client != s.db.Ent() {
		return client.Store.Get(ctx, id)
	}
	if err != nil {
		return nil, err
	}
	s.stores.Store(id, st)
	return st, nil
}

// viewerCompanies returns the viewer's store, the client to read with, and which of
// companyIDs are companies of the store.
func (s *storeCache) viewerCompanies(ctx context.Context, companyIDs []string) (*ent.Store, *ent.Client, []string, error) {
	st, err := s.viewerStore(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	client := s.db.Reader(ctx)
	// By key, and planned for its arguments: a plan made for the average store would walk
	// the store's companies (10,000 in the large store) rather than look the keys up.
	known, err := client.Company.Query().Where(company.IDIn(companyIDs...), s.db.CompaniesByKey()).IDs(s.db.PlanForArguments(ctx))
	return st, client, known, err
}

// requirePlatform returns the store of a context made by Platform.Authenticate.
//
// Errors: unauthenticated.
func (s *storeCache) requirePlatform(ctx context.Context) (*ent.Store, error) {
	v, ok := tenant.FromContext(ctx)
	if !ok || v.ActorType != tenant.ActorPlatform || v.StoreID == "" {
		return nil, errPlatformUnauthenticated
	}
	return s.viewerStore(ctx)
}
