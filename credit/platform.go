package credit

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/company"
	"github.com/creditd/creditd/ent/platformconnection"
	"github.com/creditd/creditd/tenant"
)

// The platform connector (contract §13), admin side and door: a store's connection to its
// shop on the commerce platform, whose secret signs the platform's deliveries. What a delivery
// does is in platform_inbox.go.

// DefaultPlatformSecretGrace is how long the platform secret replaced by a rotation is still
// accepted, so deliveries signed just before the platform switched are not refused.
const DefaultPlatformSecretGrace = time.Hour

// shopDomainPattern is a host name: the platform names a shop by its domain.
var shopDomainPattern = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$`)

// Secret lengths: the platform's app secrets are long random strings; a short one is a
// mistake (a truncated paste), and a bound keeps the sealed value small.
const (
	minPlatformSecret = 16
	maxPlatformSecret = 256
)

// PlatformConnection is a store's connection to its shop, without the secret.
type PlatformConnection struct {
	ID         string `json:"id"`
	StoreID    string `json:"store_id"`
	ShopDomain string `json:"shop_domain"`
	// PreviousSecretExpiresAt is when the secret replaced by the last rotation stops being
	// accepted; nil when none is.
	PreviousSecretExpiresAt *Timestamp `json:"previous_secret_expires_at"`
	CreatedAt               Timestamp  `json:"created_at"`
	UpdatedAt               Timestamp  `json:"updated_at"`
}

func (s *Platform) platformConnectionView(c *ent.PlatformConnection) PlatformConnection {
	return PlatformConnection{
		ID: c.ID, StoreID: c.StoreID, ShopDomain: c.ShopDomain, CreatedAt: At(c.CreatedAt), UpdatedAt: At(c.UpdatedAt),
		PreviousSecretExpiresAt: platformSecret(c).previousExpiry(s.clock.Now()),
	}
}

// platformSecret is a connection's rotating secret.
func platformSecret(c *ent.PlatformConnection) rotatingSecret {
	return rotatingSecret{current: c.SecretSealed, previous: c.PreviousSecretSealed, previousExpiresAt: c.PreviousSecretExpiresAt}
}

// normalizeShopDomain is how a shop's domain is compared: the platform names a shop by its
// host name, in which case and surrounding spaces do not count.
func normalizeShopDomain(domain string) string { return strings.ToLower(strings.TrimSpace(domain)) }

// sealPlatformSecret refuses a secret that cannot be the platform's and seals the others.
//
// Errors: validation_failed (param "secret"); ErrNoWebhookKey.
func (s *secretSealer) sealPlatformSecret(secret string) (string, error) {
	if err := checkPlatformSecret(secret); err != nil {
		return "", err
	}
	sealer, err := s.sealer()
	if err != nil {
		return "", err
	}
	return sealer.Seal(secret), nil
}

// Connect connects the staff member's store to its shop on the platform: deliveries
// naming shopDomain are for this store and must be signed with secret, which is sealed under
// the webhook master key.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (shop_domain:
// malformed or another store's; the store already connected; secret); ErrNoWebhookKey.
func (s *Platform) Connect(ctx context.Context, shopDomain, secret string) (PlatformConnection, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return PlatformConnection{}, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return PlatformConnection{}, err
	}
	shopDomain = normalizeShopDomain(shopDomain)
	if len(shopDomain) > 253 || !shopDomainPattern.MatchString(shopDomain) {
		return PlatformConnection{}, ParamErrorf(CodeValidationFailed, "shop_domain", "shop_domain must be a domain such as example.myplatform.com")
	}
	sealed, err := s.secrets.sealPlatformSecret(secret)
	if err != nil {
		return PlatformConnection{}, err
	}
	var out PlatformConnection
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		now := s.clock.Now()
		c, err := tx.PlatformConnection.Create().SetStoreID(v.StoreID).SetShopDomain(shopDomain).
			SetSecretSealed(sealed).SetCreatedAt(now).SetUpdatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		out = s.platformConnectionView(c)
		return nil
	})
	// The unique indexes decide, not a read before the INSERT that a concurrent connect could
	// outdate: a store has one shop, and a shop names one store.
	switch s.db.ViolatedIndex(err) {
	case "platformconnection_store_id":
		return PlatformConnection{}, errPlatformConnected(v.StoreID)
	case "platformconnection_shop_domain":
		// The shop's connection committed first; whether it is this store's is read now.
		owner, rerr := s.db.Ent().PlatformConnection.Query().Where(platformconnection.ShopDomain(shopDomain)).
			Only(tenant.System(ctx)) // deliberately across stores: a shop names one store
		if rerr == nil && owner.StoreID == v.StoreID {
			return PlatformConnection{}, errPlatformConnected(v.StoreID)
		}
		return PlatformConnection{}, ParamErrorf(CodeValidationFailed, "shop_domain", "shop %s is connected to another store", shopDomain)
	}
	return out, err
}

// errPlatformConnected refuses a second connection of a store.
func errPlatformConnected(storeID string) error {
	return ParamErrorf(CodeValidationFailed, "store", "store %s is already connected to a shop; rotate its secret with platform rotate-secret", storeID)
}

// Status returns the staff member's store's connection, for the console and
// the command line.
//
// Errors: insufficient_scope (not staff), not_found (the store is not connected).
func (s *Platform) Status(ctx context.Context) (PlatformConnection, error) {
	if _, err := requireStaff(ctx); err != nil {
		return PlatformConnection{}, err
	}
	c, err := s.db.Reader(ctx).PlatformConnection.Query().Only(ctx)
	if err != nil {
		return PlatformConnection{}, notFoundOr(err, "platform connection")
	}
	return s.platformConnectionView(c), nil
}

// RotateSecret replaces the store's platform secret; the current one is still
// accepted for grace (zero: not at all), and a previous one still in its grace is dropped.
//
// Errors: insufficient_scope (not staff), not_found (not connected), validation_failed
// (secret, grace); ErrNoWebhookKey.
func (s *Platform) RotateSecret(ctx context.Context, secret string, grace time.Duration) (PlatformConnection, error) {
	if _, err := requireStaff(ctx); err != nil {
		return PlatformConnection{}, err
	}
	if errs := PlatformSecretErrors(secret, grace); len(errs) > 0 {
		return PlatformConnection{}, errs[0]
	}
	sealed, err := s.secrets.sealPlatformSecret(secret)
	if err != nil {
		return PlatformConnection{}, err
	}
	var out PlatformConnection
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		c, err := tx.PlatformConnection.Query().Where(s.db.ForUpdate).Only(ctx)
		if err != nil {
			return notFoundOr(err, "platform connection")
		}
		now := s.clock.Now()
		upd := rotate(tx.PlatformConnection.UpdateOne(c), c.SecretSealed, sealed, now, grace)
		if c, err = upd.SetUpdatedAt(now).Save(ctx); err != nil {
			return err
		}
		out = s.platformConnectionView(c)
		return nil
	})
	return out, err
}

// Secret opens the store's current platform secret, for `creditd platform send`,
// which signs a body as the platform would.
//
// Errors: insufficient_scope (not staff), not_found (not connected); ErrNoWebhookKey.
func (s *Platform) Secret(ctx context.Context) (string, PlatformConnection, error) {
	if _, err := requireStaff(ctx); err != nil {
		return "", PlatformConnection{}, err
	}
	c, err := s.db.Reader(ctx).PlatformConnection.Query().Only(ctx)
	if err != nil {
		return "", PlatformConnection{}, notFoundOr(err, "platform connection")
	}
	sealer, err := s.secrets.sealer()
	if err != nil {
		return "", PlatformConnection{}, err
	}
	secret, err := sealer.Open(c.SecretSealed)
	if err != nil {
		return "", PlatformConnection{}, err
	}
	return secret, s.platformConnectionView(c), nil
}

// SignPlatformBody is the platform's signature of a body: base64 of HMAC-SHA256 over the raw
// bytes, keyed with the secret.
func SignPlatformBody(secret string, body []byte) string {
	return base64.StdEncoding.EncodeToString(platformMAC(secret, body))
}

// platformMAC is the HMAC-SHA256 of body keyed with secret, the platform's signature before
// its base64 encoding.
func platformMAC(secret string, body []byte) []byte {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return mac.Sum(nil)
}

// errPlatformUnauthenticated answers every delivery whose shop or signature is not right,
// without saying which, like a bad API key.
var errPlatformUnauthenticated = Errorf(CodeUnauthenticated, "the shop domain or the signature is not valid")

// Authenticate checks a request of the platform's before its body is read: the shop
// must be connected to a store and signature the base64 HMAC-SHA256 of the raw body under
// the store's secret, or under the previous one during its grace, compared in constant time.
// It returns ctx acting as the platform in that store.
//
// Errors: unauthenticated; ErrNoWebhookKey.
func (s *Platform) Authenticate(ctx context.Context, shopDomain, signature string, body []byte) (context.Context, error) {
	given, err := base64.StdEncoding.DecodeString(strings.TrimSpace(signature))
	if err != nil || len(given) != sha256.Size || shopDomain == "" {
		return nil, errPlatformUnauthenticated
	}
	// Deliberately across stores: the shop's domain is what names the store.
	c, err := s.db.Ent().PlatformConnection.Query().
		Where(platformconnection.ShopDomain(normalizeShopDomain(shopDomain))).
		Only(tenant.System(ctx))
	if ent.IsNotFound(err) {
		return nil, errPlatformUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	sealer, err := s.secrets.sealer()
	if err != nil {
		return nil, err
	}
	ok := false
	for _, v := range platformSecret(c).valid(s.clock.Now()) {
		secret, err := sealer.Open(v)
		if err != nil {
			return nil, err
		}
		// Every candidate is computed and compared, so the time taken says nothing either.
		ok = hmac.Equal(platformMAC(secret, body), given) || ok
	}
	if !ok {
		return nil, errPlatformUnauthenticated
	}
	return tenant.Platform(ctx, c.StoreID), nil
}

// takeTurn makes the store's platform deliveries, and retries of them, run one at a time
// (RowLocks.TakeStoreTurn): a delivery looks for an earlier one of the same platform object
// before it records its own, and it may lock the company it names.
func (s *Inbox) takeTurn(ctx context.Context, tx *ent.Tx, storeID string) error {
	return s.db.TakeStoreTurn(ctx, tx, storeID)
}

// Credit check decisions and reasons (contract §13).
const (
	DecisionApproved = "approved"
	DecisionDeclined = "declined"

	CheckOnHold             = "on_hold"
	CheckInsufficientCredit = "insufficient_credit"
	CheckUnknownCompany     = "unknown_company"
	CheckCurrencyMismatch   = "currency_mismatch"
)

// CreditCheckInput is the body of POST /platform/credit-checks: the platform's company GID
// and the amount about to be sold on credit, a Money object.
type CreditCheckInput struct {
	CompanyGID *string
	Amount     json.RawMessage
}

// CreditCheck is the answer to the checkout's question.
type CreditCheck struct {
	Decision        string  `json:"decision"`
	Reason          *string `json:"reason"`
	CompanyID       *string `json:"company_id"`
	AvailableCredit *Money  `json:"available_credit"`
}

// CheckCredit answers whether checkout may sell amount on credit to the company: approved
// when it is not on hold and amount is at most its available credit, the very figure its
// responses show as available_credit (companyView), so the two can never disagree. A company
// on hold is declined as on_hold whatever its credit. It writes nothing.
//
// Errors: unauthenticated (ctx not from Platform.Authenticate), validation_failed
// (company_id, amount not a Money object), invalid_amount.
func (s *Platform) CheckCredit(ctx context.Context, in CreditCheckInput) (CreditCheck, error) {
	st, err := s.stores.requirePlatform(ctx)
	if err != nil {
		return CreditCheck{}, err
	}
	if in.CompanyGID == nil || !companyGIDPattern.MatchString(*in.CompanyGID) {
		return CreditCheck{}, ParamErrorf(CodeValidationFailed, "company_id", "company_id must look like gid://platform/Company/123")
	}
	amount, reason := parsePlatformMoney(in.Amount, st.Currency)
	switch reason {
	case ReasonUnparseableBody:
		return CreditCheck{}, ParamErrorf(CodeValidationFailed, "amount", `amount must be a Money object such as {"amount": "100.00", "currency": "%s"}`, st.Currency)
	case ReasonInvalidAmount:
		return CreditCheck{}, ParamErrorf(CodeInvalidAmount, "amount", "amount must be a decimal string above zero with at most the currency's minor digits")
	}
	declined := func(why string) CreditCheck { return CreditCheck{Decision: DecisionDeclined, Reason: &why} }
	c, err := s.db.Reader(ctx).Company.Query().Where(company.PlatformCompanyGid(*in.CompanyGID)).
		Select(company.FieldID, company.FieldCreditLimit, company.FieldOutstanding, company.FieldHoldKind).Only(ctx)
	if ent.IsNotFound(err) {
		return declined(CheckUnknownCompany), nil
	}
	if err != nil {
		return CreditCheck{}, err
	}
	available := availableMoney(c.CreditLimit, c.Outstanding, st.BufferPercent, st.Currency)
	var out CreditCheck
	switch {
	case reason == ReasonCurrencyMismatch:
		out = declined(CheckCurrencyMismatch)
	case c.HoldKind != nil:
		out = declined(CheckOnHold)
	case amount.GreaterThan(decimal.RequireFromString(available.Amount)):
		out = declined(CheckInsufficientCredit)
	default:
		out = CreditCheck{Decision: DecisionApproved}
	}
	out.CompanyID, out.AvailableCredit = &c.ID, &available
	return out, nil
}
