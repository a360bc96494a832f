package credit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/creditd/creditd/ent"
	"github.com/creditd/creditd/ent/idempotencyrecord"
	"github.com/creditd/creditd/ids"
	"github.com/creditd/creditd/tenant"
)

// Idempotency-Key (contract §7), the domain's half: a write sent with a key is claimed first, in
// its own short transaction, so concurrent retries see the claim at once (409 while it runs).
// The write then runs in a second transaction that also marks the claim completed and stores
// the response: either both commit or neither does, so a crash never leaves a write without its
// record or a record without its write. A claim whose holder died expires after
// idempotencyLease and can be taken over; the holder's commit checks it still owns the claim,
// so the two never both apply. Where writers take turns (SQLite), nothing can run beside a
// write, so the key is looked up and recorded in the write's own transaction instead
// (runInTurn): a concurrent retry waits its turn and replays, and a crash leaves no claim.
//
// What a response is, and what identifies a request (method, path, body), is the transport's
// business (package httpapi): here a response is opaque bytes stored and handed back as they
// were, and a request is its fingerprint.

// DefaultIdempotencyTTL is how long a key's result is remembered.
const DefaultIdempotencyTTL = 24 * time.Hour

// idempotencyLease bounds how long an unfinished request holds its key.
const idempotencyLease = time.Minute

// Stored reports whether a write that ended with err is remembered under its idempotency key:
// successes and outcomes decided by the data (unknown company, hold already there, nothing to
// lift, overdue hold not liftable) are; malformed or invalid input and server faults are not,
// so a retry runs again.
func Stored(err error) bool {
	if err == nil {
		return true
	}
	switch CodeOf(err) {
	case CodeNotFound, CodeHoldExists, CodeHoldNotFound, CodeHoldNotLiftable, CodeInvoiceNotOpen:
		return true
	}
	return false
}

// Run runs a write under an Idempotency-Key. Without a key it just runs it. With one,
// a repeat of a completed request (same fingerprint) returns the stored response with
// replayed=true; run never executes twice for one key, also under concurrent retries and
// across instances.
//
// run receives a context carrying the write's transaction, which the domain operations it
// calls join. It returns the response to store and whether to store it (see Stored); a
// response not stored, or an error, rolls the write back and releases the key, so that a
// corrected retry runs.
//
// Errors: insufficient_scope (checked before the key is looked at), idempotency_key_reused,
// idempotency_key_in_use, and run's own error.
func (s *Idempotency) Run(ctx context.Context, key, fingerprint string, run func(ctx context.Context) (response []byte, store bool, err error)) (response []byte, replayed bool, err error) {
	if err := requireScope(ctx, ScopeWriteCredit); err != nil {
		return nil, false, err
	}
	if key == "" {
		response, _, err := run(ctx)
		return response, false, err
	}
	claim := ids.Random(22)
	if s.db.WritersTakeTurns() {
		return s.runInTurn(ctx, key, fingerprint, claim, run)
	}
	stored, err := s.recorder.claimKey(ctx, key, fingerprint, claim)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			// The database failed while claiming: the claim may have committed all the same
			// (its answer lost with the connection), so give it up as a failed write does.
			s.recorder.releaseKey(ctx, key, claim)
		}
		return nil, false, err
	}
	if stored != nil {
		return stored, true, nil
	}
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		r, err := s.runJoined(ctx, tx, run)
		response = r
		if err != nil {
			return err
		}
		n, err := tx.IdempotencyRecord.Update().
			Where(idempotencyrecord.Key(key), idempotencyrecord.Claim(claim), idempotencyrecord.Completed(false)).
			SetCompleted(true).
			SetResponse(r).
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
		s.recorder.releaseKey(ctx, key, claim)
		if errors.Is(err, errNotStored) {
			return response, false, nil
		}
		return nil, false, err
	}
	return response, false, nil
}

// claimKey claims key for this request, or returns the stored response of an earlier
// identical request.
func (s *idempotencyRecorder) claimKey(ctx context.Context, key, fingerprint, claim string) ([]byte, error) {
	// Most keys are new: one INSERT claims them. When the key is taken (the unique index
	// refuses the row), the transaction below decides what the earlier record means.
	err := s.db.WriteOne(ctx, func(client *ent.Client) error {
		return s.newClaim(ctx, client, key, fingerprint, claim, s.clock.Now()).Exec(ctx)
	})
	if !ent.IsConstraintError(err) {
		return nil, err
	}
	var stored []byte
	for attempt := 0; ; attempt++ {
		err := s.db.InTx(ctx, func(tx *ent.Tx) error {
			now := s.clock.Now()
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
				return s.newClaim(ctx, tx.Client(), key, fingerprint, claim, now).Exec(ctx)
			}
			if stored, err = earlierRecord(rec, fingerprint, now); stored != nil || err != nil {
				return err
			}
			return tx.IdempotencyRecord.UpdateOne(rec).SetClaim(claim).SetLockedUntil(now.Add(idempotencyLease)).Exec(ctx)
		})
		// Two instances inserting the same key at once: the loser retries and finds the winner's.
		// A record deleted between the read and the take-over (a claim given up, see
		// releaseKey): the key is free, the retry claims it.
		if (ent.IsConstraintError(err) || ent.IsNotFound(err)) && attempt < 3 {
			continue
		}
		return stored, err
	}
}

// errNotStored ends the transaction of a write whose response is not to be stored (see
// Stored): the write is rolled back, and Run returns the response without recording it.
var errNotStored = errors.New("response not stored")

// SeveralWrites marks ctx for a request under an Idempotency-Key whose operations may write to
// several companies in its one transaction (a GraphQL request's mutations): Run then takes the
// store's turn before they run (RowLocks.TakeStoreTurn), as every transaction that locks more
// than one company must.
func SeveralWrites(ctx context.Context) context.Context {
	return context.WithValue(ctx, severalWritesKey{}, true)
}

type severalWritesKey struct{}

// runJoined runs run in tx (run's operations join it) and returns its response, with
// errNotStored when the response is not to be stored.
func (s *Idempotency) runJoined(ctx context.Context, tx *ent.Tx, run func(ctx context.Context) (response []byte, store bool, err error)) ([]byte, error) {
	if several, _ := ctx.Value(severalWritesKey{}).(bool); several {
		v, _ := tenant.FromContext(ctx)
		if err := s.db.TakeStoreTurn(ctx, tx, v.StoreID); err != nil {
			return nil, err
		}
	}
	r, store, err := run(s.db.Join(ctx, tx))
	switch {
	case err != nil:
		return nil, err
	case !store:
		return r, errNotStored
	}
	return r, nil
}

// earlierRecord says what rec, the live record of an earlier request with the same key, means
// for a request with fingerprint at now: the response to replay (rec completed), an error (a
// different request; a claim still held), or neither, when the holder of the claim stopped
// without finishing (its process died and the lease ended, or this process gave it up during
// an outage) and the request may take the key over.
func earlierRecord(rec *ent.IdempotencyRecord, fingerprint string, now time.Time) (stored []byte, err error) {
	switch {
	case rec.Fingerprint != fingerprint:
		return nil, Errorf(CodeIdempotencyKeyReused, "this Idempotency-Key was used with a different request; use a new key for a new request")
	case rec.Completed:
		if rec.Response == nil {
			return []byte{}, nil
		}
		return rec.Response, nil
	case now.Before(rec.LockedUntil) && !abandoned(rec.Claim):
		return nil, Errorf(CodeIdempotencyKeyInUse, "a request with this Idempotency-Key is still being processed; retry shortly")
	}
	return nil, nil
}

// runInTurn is Run where writers take turns (Storage.WritersTakeTurns: SQLite). There no
// write runs between a transaction's first read and its commit, so one transaction reads the
// key's record, runs the write and records its response: a retry that arrives meanwhile runs
// after it and replays the response, and no claim has to be committed ahead of the write for
// it to see. The record left is the one the two transactions of Run leave elsewhere (a
// completed claim with its lease, times and response), and a write that fails or whose
// response is not stored leaves none, as a released claim does not. Every write of the
// record comes after run, so that run joins a transaction that has written nothing (Join).
func (s *Idempotency) runInTurn(ctx context.Context, key, fingerprint, claim string, run func(ctx context.Context) (response []byte, store bool, err error)) (response []byte, replayed bool, err error) {
	err = s.db.InTx(ctx, func(tx *ent.Tx) error {
		now := s.recorder.clock.Now()
		rec, err := tx.IdempotencyRecord.Query().Where(idempotencyrecord.Key(key)).Only(ctx)
		if err != nil && !ent.IsNotFound(err) {
			return err
		}
		expired := rec != nil && !now.Before(rec.ExpiresAt)
		if rec != nil && !expired {
			stored, err := earlierRecord(rec, fingerprint, now)
			if stored != nil || err != nil {
				response, replayed = stored, true
				return err
			}
		}
		r, err := s.runJoined(ctx, tx, run)
		response = r
		if err != nil {
			return err
		}
		switch {
		case rec == nil || expired:
			if expired {
				if err := tx.IdempotencyRecord.DeleteOne(rec).Exec(ctx); err != nil {
					return err
				}
			}
			return s.recorder.newClaim(ctx, tx.Client(), key, fingerprint, claim, now).SetCompleted(true).SetResponse(r).Exec(ctx)
		default: // a claim whose holder stopped: taken over
			return tx.IdempotencyRecord.UpdateOne(rec).SetClaim(claim).SetLockedUntil(now.Add(idempotencyLease)).
				SetCompleted(true).SetResponse(r).Exec(ctx)
		}
	})
	switch {
	case errors.Is(err, errNotStored):
		return response, false, nil
	case err != nil:
		return nil, false, err
	}
	return response, replayed, nil
}

// newClaim is the record of a new claim of key.
func (s *idempotencyRecorder) newClaim(ctx context.Context, client *ent.Client, key, fingerprint, claim string, now time.Time) *ent.IdempotencyRecordCreate {
	v, _ := tenant.FromContext(ctx)
	return client.IdempotencyRecord.Create().
		SetStoreID(v.StoreID).
		SetKey(key).
		SetFingerprint(fingerprint).
		SetClaim(claim).
		SetLockedUntil(now.Add(idempotencyLease)).
		SetCreatedAt(now).
		SetExpiresAt(now.Add(s.idempotencyTTL))
}

// releaseKey gives up an unfinished claim so that a retry runs again. A write fails most
// often because the database did, and then the release fails too: the claim is then marked
// abandoned, which lets a retry reaching this process take it over at once, and released in
// the background as soon as the database answers again, for retries reaching other instances
// (contract §7, Outages: no claim outlives its failed write). Only a process that dies keeps
// its claims until their lease ends.
//
// Giving a claim up is always safe: the write's transaction marks the record completed only
// where the claim is still its own and not completed, so a write whose claim was released or
// taken over never commits, and a completed record is never deleted.
func (s *idempotencyRecorder) releaseKey(ctx context.Context, key, claim string) {
	attempt, cancel := detachedAttempt(ctx)
	err := s.deleteClaim(attempt, key, claim)
	cancel()
	if err == nil {
		return
	}
	abandonedClaims.Store(claim, struct{}{})
	go func() {
		defer abandonedClaims.Delete(claim)
		bg := context.WithoutCancel(ctx)
		wait := 50 * time.Millisecond
		for end := time.Now().Add(idempotencyLease); time.Now().Before(end); {
			time.Sleep(wait)
			wait = min(2*wait, time.Second)
			attempt, cancel := context.WithTimeout(bg, 2*time.Second)
			err := s.deleteClaim(attempt, key, claim)
			cancel()
			if err == nil {
				return
			}
		}
	}()
}

// deleteClaim deletes key's record while claim holds it unfinished.
func (s *idempotencyRecorder) deleteClaim(ctx context.Context, key, claim string) error {
	return s.db.InTx(ctx, func(tx *ent.Tx) error {
		_, err := tx.IdempotencyRecord.Delete().
			Where(idempotencyrecord.Key(key), idempotencyrecord.Claim(claim), idempotencyrecord.Completed(false)).
			Exec(ctx)
		return err
	})
}

// detachedAttempt is ctx without its cancellation, for a release that must run although its
// request's client left, but within the request's deadline, if it has one.
func detachedAttempt(ctx context.Context) (context.Context, context.CancelFunc) {
	bg := context.WithoutCancel(ctx)
	if d, ok := ctx.Deadline(); ok {
		return context.WithDeadline(bg, d)
	}
	return context.WithTimeout(bg, 2*time.Second)
}

// abandonedClaims holds the claims this process gave up and could not yet release (claim
// values are random, hence unique across services and stores).
var abandonedClaims sync.Map

// abandoned reports whether this process gave claim up.
func abandoned(claim string) bool {
	_, ok := abandonedClaims.Load(claim)
	return ok
}
