package credit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/idempotencyrecord"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Idempotency-Key (contract §7). A write sent with a key is claimed first, in its own short
// transaction, so concurrent retries see the claim at once (409 while it runs). The write then
// runs in a second transaction that also marks the claim completed and stores the response:
// either both commit or neither does, so a crash never leaves a write without its record or a
// record without its write. A claim whose holder died expires after idempotencyLease and can be
// taken over; the holder's commit checks it still owns the claim, so the two never both apply.

// DefaultIdempotencyTTL is how long a key's result is remembered.
const DefaultIdempotencyTTL = 24 * time.Hour

// idempotencyLease bounds how long an unfinished request holds its key.
const idempotencyLease = time.Minute

// Outcome is a write's response as its transport rendered it.
type Outcome struct {
	Status int
	Body   []byte
	// Store says whether the outcome is remembered for the key. Outcomes that are not stored
	// (validation failures, scope errors) are rolled back and release the key, so a corrected
	// retry with the same key runs.
	Store bool
}

// Stored reports whether a write that ended with err is remembered under its idempotency key:
// successes and outcomes decided by the data (unknown company, hold already there, nothing to
// lift, overdue hold not liftable) are; malformed or invalid input and server faults are not,
// so a retry runs again.
func Stored(err error) bool {
	if err == nil {
		return true
	}
	switch ErrorCode(err) {
	case CodeNotFound, CodeHoldExists, CodeHoldNotFound, CodeHoldNotLiftable:
		return true
	}
	return false
}

// CheckIdempotencyKey validates an Idempotency-Key header value: 1 to 255 printable ASCII
// characters.
//
// Errors: invalid_request (param "Idempotency-Key").
func CheckIdempotencyKey(key string) error {
	ok := len(key) >= 1 && len(key) <= 255
	for i := 0; ok && i < len(key); i++ {
		ok = key[i] >= 0x20 && key[i] <= 0x7e
	}
	if !ok {
		return ParamErrorf(CodeInvalidRequest, "Idempotency-Key", "Idempotency-Key must be 1 to 255 printable ASCII characters")
	}
	return nil
}

// IdempotencyFingerprint checks the Idempotency-Key header of a write (sent tells whether the
// header was present at all, even empty) and returns the fingerprint of the request it names:
// method, path and canonical body. Without the header it returns "" and no error.
//
// Errors: invalid_request (a malformed key, or a body that is not JSON).
func IdempotencyFingerprint(sent bool, key, method, path string, body []byte) (string, error) {
	if !sent {
		return "", nil
	}
	if err := CheckIdempotencyKey(key); err != nil {
		return "", err
	}
	canonical, err := CanonicalJSON(body)
	if err != nil {
		return "", Errorf(CodeInvalidRequest, "the request body is not valid JSON")
	}
	return Fingerprint(method, path, canonical), nil
}

// Fingerprint identifies a request for idempotency: its method, path and canonical body.
func Fingerprint(method, path string, canonicalBody []byte) string {
	h := sha256.New()
	h.Write([]byte(method))
	h.Write([]byte{0})
	h.Write([]byte(path))
	h.Write([]byte{0})
	h.Write(canonicalBody)
	return hex.EncodeToString(h.Sum(nil))
}

// CanonicalJSON re-encodes a JSON document with object keys sorted and insignificant space
// removed, keeping numbers exactly as written, so equal bodies fingerprint alike.
func CanonicalJSON(body []byte) ([]byte, error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return []byte("{}"), nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// Idempotent runs a write under an Idempotency-Key. Without a key it just runs it. With one,
// a repeat of a stored request returns the stored outcome with replayed=true; run never
// executes twice for one key, also under concurrent retries and across instances.
//
// run receives a context carrying the write's transaction; the domain operations it calls
// join that transaction.
//
// Errors: insufficient_scope (checked before the key is looked at), idempotency_key_reused,
// idempotency_key_in_use, and run's own error (not stored).
func (s *Service) Idempotent(ctx context.Context, scope, key, fingerprint string, run func(ctx context.Context) (Outcome, error)) (out Outcome, replayed bool, err error) {
	if err := requireScope(ctx, scope); err != nil {
		return Outcome{}, false, err
	}
	if key == "" {
		out, err := run(ctx)
		return out, false, err
	}
	claim := ids.Random(22)
	stored, err := s.claimKey(ctx, key, fingerprint, claim)
	if err != nil {
		return Outcome{}, false, err
	}
	if stored != nil {
		return *stored, true, nil
	}
	errNotStored := errors.New("outcome not stored")
	err = s.inTx(ctx, func(tx *ent.Tx) error {
		o, err := run(ent.NewTxContext(ctx, tx))
		if err != nil {
			return err
		}
		out = o
		if !o.Store {
			return errNotStored
		}
		n, err := tx.IdempotencyRecord.Update().
			Where(idempotencyrecord.Key(key), idempotencyrecord.Claim(claim), idempotencyrecord.Completed(false)).
			SetCompleted(true).
			SetResponseStatus(o.Status).
			SetResponseBody(o.Body).
			Save(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return Errorf(CodeIdempotencyKeyInUse, "another request took over this Idempotency-Key; retry to get its result")
		}
		return nil
	})
	if err != nil {
		s.releaseKey(ctx, key, claim)
		if errors.Is(err, errNotStored) {
			return out, false, nil
		}
		return Outcome{}, false, err
	}
	return out, false, nil
}

// claimKey claims key for this request, or returns the stored outcome of an earlier identical
// request.
func (s *Service) claimKey(ctx context.Context, key, fingerprint, claim string) (*Outcome, error) {
	var stored *Outcome
	for attempt := 0; ; attempt++ {
		err := s.inTx(ctx, func(tx *ent.Tx) error {
			now := s.Now()
			rec, err := tx.IdempotencyRecord.Query().Where(idempotencyrecord.Key(key)).Only(ctx)
			if err != nil && !ent.IsNotFound(err) {
				return err
			}
			if rec != nil && !now.Before(rec.ExpiresAt) {
				if err := tx.IdempotencyRecord.DeleteOne(rec).Exec(ctx); err != nil {
					return err
				}
				rec = nil
			}
			if rec == nil {
				v, _ := tenant.FromContext(ctx)
				return tx.IdempotencyRecord.Create().
					SetStoreID(v.StoreID).
					SetKey(key).
					SetFingerprint(fingerprint).
					SetClaim(claim).
					SetLockedUntil(now.Add(idempotencyLease)).
					SetCreatedAt(now).
					SetExpiresAt(now.Add(s.idempotencyTTL)).
					Exec(ctx)
			}
			switch {
			case rec.Fingerprint != fingerprint:
				return Errorf(CodeIdempotencyKeyReused, "this Idempotency-Key was used with a different request; use a new key for a new request")
			case rec.Completed:
				stored = &Outcome{Status: rec.ResponseStatus, Body: rec.ResponseBody, Store: true}
				return nil
			case now.Before(rec.LockedUntil):
				return Errorf(CodeIdempotencyKeyInUse, "a request with this Idempotency-Key is still being processed; retry shortly")
			}
			// The holder of the claim stopped without finishing: take it over.
			return tx.IdempotencyRecord.UpdateOne(rec).SetClaim(claim).SetLockedUntil(now.Add(idempotencyLease)).Exec(ctx)
		})
		// Two instances inserting the same key at once: the loser retries and finds the winner's.
		if ent.IsConstraintError(err) && attempt < 3 {
			continue
		}
		return stored, err
	}
}

// releaseKey gives up an unfinished claim so that a retry runs again.
func (s *Service) releaseKey(ctx context.Context, key, claim string) {
	_ = s.inTx(context.WithoutCancel(ctx), func(tx *ent.Tx) error {
		_, err := tx.IdempotencyRecord.Delete().
			Where(idempotencyrecord.Key(key), idempotencyrecord.Claim(claim), idempotencyrecord.Completed(false)).
			Exec(ctx)
		return err
	})
}

// PurgeIdempotencyRecords deletes records past their retention, in all stores, and returns
// how many it deleted.
func (s *Service) PurgeIdempotencyRecords(ctx context.Context) (int, error) {
	var n int
	err := s.inTx(tenant.System(ctx), func(tx *ent.Tx) error {
		var err error
		n, err = tx.IdempotencyRecord.Delete().Where(idempotencyrecord.ExpiresAtLTE(s.Now())).Exec(tenant.System(ctx))
		return err
	})
	return n, err
}
