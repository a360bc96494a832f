package credit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"hash/crc32"
	"strings"
	"sync"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/apikey"
	"github.com/creditd/creditd/ent/apikeysecret"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Secrets look like ck_<30 base62 characters><6 base62 checksum characters>: about 178 random
// bits, and a CRC-32 of the rest so that secret scanners (and this service) recognise a
// mistyped or made-up secret offline.
const (
	secretPrefix     = "ck_"
	secretRandomLen  = 30
	secretChecksumLn = 6
	secretLen        = len(secretPrefix) + secretRandomLen + secretChecksumLn
)

// lastUsedInterval is how often at most a key's last_used_at is written by one process.
const lastUsedInterval = time.Minute

// DefaultRotationGrace is how long a rotated-out secret keeps working.
const DefaultRotationGrace = 24 * time.Hour

// DefaultStaleAfter is how long a key may go unused before cleanup is suggested (90 days).
const DefaultStaleAfter = 90 * 24 * time.Hour

func newSecret() string {
	body := secretPrefix + ids.Random(secretRandomLen)
	return body + secretChecksum(body)
}

func secretChecksum(body string) string {
	sum := crc32.ChecksumIEEE([]byte(body))
	out := make([]byte, secretChecksumLn)
	for i := secretChecksumLn - 1; i >= 0; i-- {
		out[i] = ids.Base62[sum%62]
		sum /= 62
	}
	return string(out)
}

// wellFormedSecret checks a secret's shape and checksum without touching the database.
func wellFormedSecret(s string) bool {
	if len(s) != secretLen || !strings.HasPrefix(s, secretPrefix) {
		return false
	}
	for i := len(secretPrefix); i < len(s); i++ {
		if strings.IndexByte(ids.Base62, s[i]) < 0 {
			return false
		}
	}
	body := s[:len(s)-secretChecksumLn]
	return secretChecksum(body) == s[len(body):]
}

func hashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// errUnauthenticated is the one answer for a missing, malformed, unknown, revoked or expired
// key: callers are never told which.
var errUnauthenticated = Errorf(CodeUnauthenticated, "a valid API key is required: send Authorization: Bearer <key>")

// ErrUnauthenticated returns the contract's answer to a request without a usable key.
func ErrUnauthenticated() error { return errUnauthenticated }

// maxCachedKeys bounds the cache; when full it is emptied and refills with the keys in use.
const maxCachedKeys = 10_000

// cachedKey is a successful authentication, by secret hash.
type cachedKey struct {
	storeID, keyID, label string
	scopes                []string
	lastUsedAt            *time.Time
	// changes is the count of key changes (Storage.KeyChanges) read before the key was: the entry holds while the
	// count is the same. until is the secret's expiry (the end of a rotation's grace) by the
	// service clock, which tests and `--now` move; the zero time when it has none.
	changes int64
	until   time.Time
}

// keyCache holds authentications by secret hash. An entry is used only while the database's
// count of key changes is the one it was made under, so a revocation made anywhere (another
// instance, the command line) takes effect on the very next request (contract §2), and a busy
// key costs one read of a one-row table per request instead of the key lookup.
type keyCache struct {
	mu   sync.RWMutex
	keys map[string]*cachedKey
}

func (c *keyCache) get(hash string, now time.Time, changes int64) *cachedKey {
	if k := c.lookup(hash, now); k != nil && k.changes == changes {
		return k
	}
	return nil
}

// lookup returns the entry for hash whatever count of key changes it was made under, for a
// read that confirms the count itself (AuthenticateRead).
func (c *keyCache) lookup(hash string, now time.Time) *cachedKey {
	c.mu.RLock()
	k := c.keys[hash]
	c.mu.RUnlock()
	if k == nil || (!k.until.IsZero() && !now.Before(k.until)) {
		return nil
	}
	return k
}

// drop forgets the entry for hash: its key no longer authenticates.
func (c *keyCache) drop(hash string) {
	c.mu.Lock()
	delete(c.keys, hash)
	c.mu.Unlock()
}

func (c *keyCache) put(hash string, k *cachedKey) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.keys == nil || len(c.keys) >= maxCachedKeys {
		c.keys = map[string]*cachedKey{}
	}
	c.keys[hash] = k
}

// Authenticate resolves a bearer secret to its key and returns ctx carrying the key's viewer.
// A successful authentication is remembered until a key or secret changes anywhere (a
// revocation, a rotation) or the secret's grace ends: every request reads the database's count
// of key changes, so a revocation by any process takes effect on the next request (contract §2).
//
// Errors: unauthenticated.
func (s *Keys) Authenticate(ctx context.Context, secret string) (context.Context, error) {
	if !wellFormedSecret(secret) {
		return nil, errUnauthenticated
	}
	hash := hashSecret(secret)
	k, err := s.auth.authenticate(ctx, hash)
	if err != nil {
		return nil, err
	}
	// A subscription keeps checking this key for as long as it runs (see EventSubscription.Confirm).
	ctx = context.WithValue(ctx, authenticatedKey{}, streamKey{hash: hash, keyID: k.keyID, changes: k.changes, until: k.until})
	return tenant.APIKey(ctx, k.storeID, k.keyID, k.label, k.scopes), nil
}

// authenticate is Authenticate's check of a secret's hash: the count of key changes, then the
// cache entry made under that count, else the key's lookup.
func (s *keyAuth) authenticate(ctx context.Context, hash string) (*cachedKey, error) {
	sys := tenant.System(ctx)
	changes, err := s.db.KeyChanges(sys)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	if k := s.keys.get(hash, now, changes); k != nil {
		s.touchKey(sys, k.keyID, k.lastUsedAt, now)
		return k, nil
	}
	// One statement: the key that is not revoked and has this secret, unexpired.
	key, err := s.db.Ent().APIKey.Query().
		Where(apikey.RevokedAtIsNil(), s.db.KeysWithLiveSecret(hash, now)).
		Only(sys)
	if ent.IsNotFound(err) {
		s.keys.drop(hash)
		return nil, errUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	// A secret in its rotation grace is trusted no longer than its expiry. The entry is made
	// under the count read before the key was, so a change committed in between is seen by
	// the next request.
	k := &cachedKey{storeID: key.StoreID, keyID: key.ID, label: key.Label, scopes: key.Scopes, lastUsedAt: key.LastUsedAt, changes: changes}
	if sec, err := s.db.Ent().APIKeySecret.Query().Where(apikeysecret.KeyID(key.ID), apikeysecret.Hash(hash)).Only(sys); err == nil {
		if sec.ExpiresAt != nil {
			k.until = *sec.ExpiresAt
		}
		s.keys.put(hash, k)
	}
	s.touchKey(sys, key.ID, key.LastUsedAt, now)
	return k, nil
}

// A read (a GET, which changes nothing) may confirm a cached key inside its own first
// statement instead of a statement of its own: AuthenticateRead trusts the cache entry for
// now, under the count of key changes it was made under, and the read adds the condition
// "the count is still that" to its statement (confirmedRead). A revocation that returned
// before the request arrived is in that statement's snapshot, so it is refused as at once as
// before. Until a statement has seen the condition hold, or Keys.Confirm has read the count
// itself, the request's answer is held: its transport calls Keys.Confirm before writing a
// byte, and answers 401 instead when that fails.

// keyConfirmation is a read's pending confirmation of its cached key. A request's handler
// runs on one goroutine, so it needs no lock.
type keyConfirmation struct {
	hash    string
	keyID   string
	changes int64
	done    bool
	err     error
}

type keyConfirmationKey struct{}

func pendingConfirmation(ctx context.Context) *keyConfirmation {
	kc, _ := ctx.Value(keyConfirmationKey{}).(*keyConfirmation)
	if kc == nil || kc.done {
		return nil
	}
	return kc
}

// AuthenticateRead is Authenticate for a request that only reads: a key found in the cache is
// trusted until the request's answer is written, and confirmed by then (see Keys.Confirm), by
// the read's own statement where the read can (GET of a company, its ledger, the list of
// companies). A key not in the cache is checked at once, as by Authenticate.
//
// Errors: unauthenticated.
func (s *Keys) AuthenticateRead(ctx context.Context, secret string) (context.Context, error) {
	if !wellFormedSecret(secret) {
		return nil, errUnauthenticated
	}
	hash := hashSecret(secret)
	now := s.clock.Now()
	k := s.auth.keys.lookup(hash, now)
	if k == nil {
		return s.Authenticate(ctx, secret)
	}
	s.auth.touchKey(tenant.System(ctx), k.keyID, k.lastUsedAt, now)
	ctx = context.WithValue(ctx, keyConfirmationKey{}, &keyConfirmation{hash: hash, keyID: k.keyID, changes: k.changes})
	return tenant.APIKey(ctx, k.storeID, k.keyID, k.label, k.scopes), nil
}

// Confirm confirms the key that AuthenticateRead trusted from its cache, unless a
// statement of the request already did: it checks the key as Authenticate does. It returns
// nil for a context without such a key, and the same answer when called again.
//
// Errors: unauthenticated.
func (s *Keys) Confirm(ctx context.Context) error { return s.auth.confirmKey(ctx) }

// confirmKey is Confirm, for the reads that confirm a cached key (confirmedRead).
func (s *keyAuth) confirmKey(ctx context.Context) error {
	kc, _ := ctx.Value(keyConfirmationKey{}).(*keyConfirmation)
	if kc == nil || kc.done {
		if kc != nil {
			return kc.err
		}
		return nil
	}
	k, err := s.authenticate(ctx, kc.hash)
	if err == nil && k.keyID != kc.keyID {
		err = errUnauthenticated // a secret cannot move to another key; refuse if it ever seems to
	}
	if err != nil && CodeOf(err) != CodeUnauthenticated {
		return err // an outage: the key is neither confirmed nor refused, and the request fails
	}
	kc.done, kc.err = true, err
	return err
}

// confirmedRead runs read, which reports whether its statement returned a row, with the
// condition that confirms a pending cached key (see AuthenticateRead) to add to that
// statement, or a condition that adds nothing. A row returned confirms the key: the count was
// still the entry's when the statement read it. No row may mean nothing matched or that the
// count moved: then the key is checked in full (Keys.Confirm) and, if it passes, read runs again
// without the condition, so a valid key never gets an empty answer that the count's move made.
//
// Errors: unauthenticated, and read's.
func (s *keyAuth) confirmedRead(ctx context.Context, read func(confirm condition) (found bool, err error)) error {
	kc := pendingConfirmation(ctx)
	if kc == nil {
		_, err := read(noCondition)
		return err
	}
	found, err := read(s.db.KeyChangesAre(kc.changes))
	if err != nil || found {
		if found {
			kc.done = true
		}
		return err
	}
	if err := s.confirmKey(ctx); err != nil {
		return err
	}
	_, err = read(noCondition)
	return err
}

// touchKey records a key's use: on its first use, then at most once a minute per process.
// lastUsedAt is the key's last_used_at as last read. A failure to record is not the caller's
// problem and does not fail the request.
func (s *keyAuth) touchKey(ctx context.Context, keyID string, lastUsedAt *time.Time, now time.Time) {
	s.lastUsedMu.Lock()
	last, seen := s.lastUsedWritten[keyID]
	due := !seen || now.Sub(last) >= lastUsedInterval
	if !seen && lastUsedAt != nil && now.Sub(*lastUsedAt) < lastUsedInterval {
		// Another process or an earlier run wrote it moments ago.
		due = false
		s.lastUsedWritten[keyID] = *lastUsedAt
	}
	if due {
		s.lastUsedWritten[keyID] = now
	}
	s.lastUsedMu.Unlock()
	if due {
		_ = s.db.InTx(ctx, func(tx *ent.Tx) error {
			return tx.APIKey.UpdateOneID(keyID).SetLastUsedAt(now).Exec(ctx)
		})
	}
}

// KeyInfo describes a key without its secret.
type KeyInfo struct {
	ID               string     `json:"id"`
	StoreID          string     `json:"store_id"`
	Label            string     `json:"label"`
	Scopes           []string   `json:"scopes"`
	CreatedAt        Timestamp  `json:"created_at"`
	LastUsedAt       *Timestamp `json:"last_used_at"`
	CleanupSuggested bool       `json:"cleanup_suggested"`
	RevokedAt        *Timestamp `json:"revoked_at"`
}

// IssuedKey is a key with the secret just issued for it; the secret is shown only this once.
type IssuedKey struct {
	ID     string `json:"id"`
	Secret string `json:"secret"`
	// OldSecretsEnd is when the key's secrets before a rotation stop working (Keys.Rotate's
	// clock plus its grace); zero for a new key. Not part of the command line's JSON.
	OldSecretsEnd Timestamp `json:"-"`
}

// ParseScopes reads a comma-separated scope list.
//
// Errors: validation_failed (param "scopes").
func ParseScopes(list string) ([]string, error) {
	return checkScopes(strings.Split(list, ","))
}

// Create creates an API key in the staff member's store (its API settings) and returns
// its secret, shown only this once.
//
// Errors: insufficient_scope (not staff), not_found (store), validation_failed (label, scopes).
func (s *Keys) Create(ctx context.Context, label string, scopes []string) (IssuedKey, error) {
	v, err := requireStaff(ctx)
	if err != nil {
		return IssuedKey{}, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return IssuedKey{}, err
	}
	label = strings.TrimSpace(label)
	scopes, errs := checkKey(label, scopes)
	if len(errs) > 0 {
		return IssuedKey{}, errs[0]
	}
	var out IssuedKey
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		now := s.clock.Now()
		k, err := tx.APIKey.Create().SetStoreID(v.StoreID).SetLabel(label).SetScopes(scopes).SetCreatedAt(now).Save(ctx)
		if err != nil {
			return err
		}
		secret := newSecret()
		if err := tx.APIKeySecret.Create().SetStoreID(v.StoreID).SetKeyID(k.ID).SetHash(hashSecret(secret)).SetCreatedAt(now).Exec(ctx); err != nil {
			return err
		}
		out = IssuedKey{ID: k.ID, Secret: secret}
		err = s.events.emit(ctx, tx, k.StoreID, EventTypeKeyCreated, keyEventView(k), nil)
		return err
	})
	return out, err
}

// Rotate issues a new secret for a key of the staff member's store; its current secrets
// keep working for grace.
//
// Errors: insufficient_scope (not staff), not_found (unknown, revoked or another store's
// key), validation_failed (grace).
func (s *Keys) Rotate(ctx context.Context, keyID string, grace time.Duration) (IssuedKey, error) {
	if _, err := requireStaff(ctx); err != nil {
		return IssuedKey{}, err
	}
	if err := checkGrace(grace); err != nil {
		return IssuedKey{}, err
	}
	var out IssuedKey
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		k, err := activeKey(ctx, tx, keyID)
		if err != nil {
			return err
		}
		now := s.clock.Now()
		if err := tx.APIKeySecret.Update().
			Where(apikeysecret.KeyID(k.ID), apikeysecret.ExpiresAtIsNil()).
			SetExpiresAt(now.Add(grace)).Exec(ctx); err != nil {
			return err
		}
		secret := newSecret()
		if err := tx.APIKeySecret.Create().SetStoreID(k.StoreID).SetKeyID(k.ID).SetHash(hashSecret(secret)).SetCreatedAt(now).Exec(ctx); err != nil {
			return err
		}
		out = IssuedKey{ID: k.ID, Secret: secret, OldSecretsEnd: At(now.Add(grace))}
		err = s.events.emit(ctx, tx, k.StoreID, EventTypeKeyRotated, keyEventView(k), nil)
		return err
	})
	// The old secrets' expiry bumps key_changes (a trigger): every process sees it.
	return out, err
}

// Revoke stops every secret of a key of the staff member's store at once.
//
// Errors: insufficient_scope (not staff), not_found (unknown, already revoked or another
// store's key).
func (s *Keys) Revoke(ctx context.Context, keyID string) error {
	if _, err := requireStaff(ctx); err != nil {
		return err
	}
	err := s.db.InTx(ctx, func(tx *ent.Tx) error {
		k, err := activeKey(ctx, tx, keyID)
		if err != nil {
			return err
		}
		revoked, err := tx.APIKey.UpdateOne(k).SetRevokedAt(s.clock.Now()).Save(ctx)
		if err != nil {
			return err
		}
		err = s.events.emit(ctx, tx, k.StoreID, EventTypeKeyRevoked, keyEventView(revoked), map[string]any{"revoked_at": nil})
		return err
	})
	// Revoking bumps key_changes (a trigger) in the same transaction: every process's next
	// authentication reads the new count and no longer trusts what it cached.
	return err
}

func activeKey(ctx context.Context, tx *ent.Tx, keyID string) (*ent.APIKey, error) {
	if !ids.HasPrefix(keyID, "key") {
		return nil, errNotFound("key")
	}
	k, err := tx.APIKey.Get(ctx, keyID)
	if err != nil {
		return nil, notFoundOr(err, "key")
	}
	if k.RevokedAt != nil {
		return nil, Errorf(CodeNotFound, "key %s is revoked", keyID)
	}
	return k, nil
}

// List lists the staff member's store's keys, oldest first, suggesting cleanup for keys
// unused (or, if never used, created) longer than staleAfter ago.
//
// Errors: insufficient_scope (not staff), not_found (store).
func (s *Keys) List(ctx context.Context, staleAfter time.Duration) ([]KeyInfo, error) {
	if _, err := requireStaff(ctx); err != nil {
		return nil, err
	}
	if _, err := s.stores.viewerStore(ctx); err != nil {
		return nil, err
	}
	keys, err := s.db.Ent().APIKey.Query().
		Order(ent.Asc(apikey.FieldCreatedAt), ent.Asc(apikey.FieldID)).All(ctx)
	if err != nil {
		return nil, err
	}
	now := s.clock.Now()
	out := make([]KeyInfo, 0, len(keys))
	for _, k := range keys {
		lastActivity := k.CreatedAt
		if k.LastUsedAt != nil {
			lastActivity = *k.LastUsedAt
		}
		out = append(out, KeyInfo{
			ID:               k.ID,
			StoreID:          k.StoreID,
			Label:            k.Label,
			Scopes:           k.Scopes,
			CreatedAt:        At(k.CreatedAt),
			LastUsedAt:       atPtr(k.LastUsedAt),
			CleanupSuggested: k.RevokedAt == nil && now.Sub(lastActivity) >= staleAfter,
			RevokedAt:        atPtr(k.RevokedAt),
		})
	}
	return out, nil
}
